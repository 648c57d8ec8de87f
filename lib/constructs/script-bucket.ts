import { type CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { scriptObjectKey } from '#adapters/layout';
import { CLOUDFRONT_CONSOLE_ORIGIN, UPLOAD_CORS } from '../front-door-rules';
import { KEEP_UNLESS_JUST_CREATED } from './keep';

export interface ScriptBucketProps {
  /**
   * The IAM role or user the dashboard runs as (context `dashboardPrincipalArn`). When given, the bucket refuses
   * script writes and deletes from any other principal, admins included; without it, any principal its own IAM
   * policy allows may write (attach the upload policy, output ScriptUploadPolicyArn, to the dashboard's principal).
   */
  dashboardPrincipalArn?: string;
}

/** Every version script's object key: `scripts/<project>/<version>.luau`. */
const SCRIPT_OBJECTS = scriptObjectKey({ projectId: '*', versionId: '*' });

/**
 * Where each version's script lives: a private bucket, TLS only, encrypted, versioned (an overwritten or deleted
 * script object can be recovered), every request logged to an access-log bucket. Its policy lets only the loader
 * function read a script (`readableOnlyBy`), so an account admin's console or a stray grant cannot leak one, and,
 * with `dashboardPrincipalArn`, only the dashboard write or delete one. Kept when the stack goes, like the table:
 * the scripts are the publisher's.
 */
export class ScriptBucket extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogs: s3.Bucket;
  /** What the dashboard's principal needs to upload (PutObject) and clean up a failed upload (DeleteObject). */
  readonly uploadPolicy: iam.ManagedPolicy;
  /** The Deny of script writes by anyone but the dashboard (with `dashboardPrincipalArn`), and the other writers it spares. */
  private readonly onlyWriters?: { statement: iam.PolicyStatement; arns: string[] };

  constructor(scope: Construct, id: string, props: ScriptBucketProps = {}) {
    super(scope, id);
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // ACLs off: S3's log delivery writes under a bucket-policy grant (cdk.json's serverAccessLogsUseBucketPolicy),
      // the form AWS recommends over the legacy LogDeliveryWrite ACL.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // As long as the API's access logs: who read which script stays answerable for a quarter.
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: KEEP_UNLESS_JUST_CREATED,
    });
    this.bucket = new s3.Bucket(this, 'Scripts', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'scripts/',
      // Old object versions only come from a re-upload under the same key, which uploads never do: keep them 30 days.
      lifecycleRules: [{ noncurrentVersionExpiration: Duration.days(30) }],
      removalPolicy: KEEP_UNLESS_JUST_CREATED,
    });

    const writes = ['s3:PutObject', 's3:DeleteObject'];
    this.uploadPolicy = new iam.ManagedPolicy(this, 'UploadPolicy', {
      description: "Upload version scripts with the dashboard CLI (versions upload): attach to the dashboard's role or user",
      statements: [new iam.PolicyStatement({ actions: writes, resources: [this.bucket.arnForObjects(SCRIPT_OBJECTS)] })],
    });
    Validations.of(this.uploadPolicy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).resolve(Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnElement)) as string}.Arn>/${SCRIPT_OBJECTS}]`,
      reason: 'Each upload writes a new version id under its project, so the dashboard writes any script object, and only script objects.',
    });
    if (props.dashboardPrincipalArn) {
      const statement = new iam.PolicyStatement({
        sid: 'OnlyTheDashboardWritesScripts',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: [...writes, 's3:PutObjectAcl', 's3:DeleteObjectVersion'],
        resources: [this.bucket.arnForObjects('*')],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': [props.dashboardPrincipalArn] } },
      });
      this.bucket.addToResourcePolicy(statement);
      this.onlyWriters = { statement, arns: [props.dashboardPrincipalArn] };
    }
  }

  /** A writer of scripts besides the dashboard (the console's function, which stores committed uploads). */
  alsoWritableBy(role: iam.IRole): void {
    if (!this.onlyWriters) return;
    this.onlyWriters.arns.push(role.roleArn);
    this.onlyWriters.statement.addCondition('ArnNotEquals', { 'aws:PrincipalArn': [...this.onlyWriters.arns] });
  }

  /**
   * The console's uploads: the browser PUTs a file straight to its staged key with a presigned URL, from the
   * console's origin (the distribution's name), which the CORS rule allows (lib/front-door-rules.ts UPLOAD_CORS; the
   * signature is the credential). A staged file no commit reached goes within a day.
   */
  acceptUploads(): void {
    this.bucket.addCorsRule({
      allowedMethods: UPLOAD_CORS.allowedMethods.map((method) => s3.HttpMethods[method]),
      allowedOrigins: [CLOUDFRONT_CONSOLE_ORIGIN],
      allowedHeaders: [...UPLOAD_CORS.allowedHeaders],
      maxAge: UPLOAD_CORS.maxAgeSeconds,
    });
    this.bucket.addLifecycleRule({ id: 'StagedUploads', prefix: 'uploads/', expiration: Duration.days(1), noncurrentVersionExpiration: Duration.days(1) });
  }

  /**
   * Refuse every read of a script object but the given role's (the loader function's): a Deny no grant can undo.
   * Staged console uploads (`uploads/`) are not scripts yet: the console's function reads them back at the commit.
   */
  readableOnlyBy(role: iam.IRole): void {
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyTheLoaderReadsScripts',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:GetObject', 's3:GetObjectVersion'],
        resources: [this.bucket.arnForObjects(SCRIPT_OBJECTS)],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': role.roleArn } },
      }),
    );
  }
}
