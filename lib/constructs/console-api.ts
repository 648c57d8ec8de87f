import { Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { scriptObjectKey, uploadObjectKey } from '#adapters/layout';
import { DEFAULT_DISCORD_API_BASE } from '#domain/webhooks/discord-webhook-url';
import type { ScriptBucket } from './script-bucket';
import { ServiceFunction } from './service-function';
import { bindTable, CONSOLE_TABLE_ACCESS } from './table-access';

export interface ConsoleApiProps {
  table: ITableV2;
  scripts: ScriptBucket;
  /** The owner API: a token created in the console gets its API key on this usage plan; a revoke flushes this stage's cache. */
  restApi: apigateway.RestApi;
  usagePlan: apigateway.IUsagePlan;
  /** Where the hosted stub is served (the loader routes' base URL), for the Loader page's line. */
  loaderBaseUrl: string;
  /** The console's origin when known at deploy time (a custom domain); else the handler reads the forwarded host. */
  consoleOrigin?: string;
  discordApiBase?: string;
}

/**
 * The console API's function (`lambdas/functions/console-api.ts`, `/console/api/*`), with what it needs: the
 * table grants of every owner route it serves plus its own items (CONSOLE_TABLE_ACCESS), the scripts bucket's
 * script objects (a committed upload is stored as its version's script) and staged uploads (presigned PUTs are
 * signed by this role, so it may put them), and the gateway calls of token create and revoke. The distribution
 * (lib/constructs/front-door.ts) routes `/console/api/*` to `origin`, its function URL.
 */
export class ConsoleApi extends Construct {
  readonly function: ServiceFunction;
  readonly url: lambda.FunctionUrl;
  readonly origin: cloudfront.IOrigin;

  constructor(scope: Construct, id: string, props: ConsoleApiProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.function = new ServiceFunction(this, 'Function', {
      entry: 'functions/console-api.ts',
      description: 'Publisher console API: /console/api/* (session, owner routes, uploads, webhooks, tokens)',
      // A leak revoke of many watermarks runs bulk revokes one after another; the front door waits up to 30 s.
      timeout: Duration.seconds(28),
      environment: {
        SCRIPT_BUCKET: props.scripts.bucket.bucketName,
        LOADER_BASE_URL: props.loaderBaseUrl,
        DISCORD_API_BASE: props.discordApiBase ?? DEFAULT_DISCORD_API_BASE,
        USAGE_PLAN_ID: props.usagePlan.usagePlanId,
        REST_API_ID: props.restApi.restApiId,
        STAGE_NAME: props.restApi.deploymentStage.stageName,
        ...(props.consoleOrigin ? { CONSOLE_ORIGIN: props.consoleOrigin } : {}),
      },
    });
    bindTable(this.function, props.table, CONSOLE_TABLE_ACCESS);

    const scriptObjects = props.scripts.bucket.arnForObjects(scriptObjectKey({ projectId: '*', versionId: '*' }));
    const uploads = props.scripts.bucket.arnForObjects(uploadObjectKey({ projectId: '*', uploadId: '*' }));
    this.function.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:DeleteObject'], resources: [scriptObjects] }));
    this.function.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], resources: [uploads] }));
    const role = this.function.role;
    if (!role) throw new Error('The console function has no role');
    props.scripts.alsoWritableBy(role);
    props.scripts.acceptUploads();

    // dashboard/context.ts usagePlanTokenKeys: the API key of a new token on the plan; on revoke, deleted and the stage's cache flushed.
    const gateway = (path: string) => `arn:${stack.partition}:apigateway:${stack.region}::${path}`;
    const apiKeys = gateway('/apikeys/*');
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['apigateway:POST', 'apigateway:GET', 'apigateway:DELETE'],
        resources: [
          gateway('/apikeys'),
          apiKeys,
          gateway(`/usageplans/${props.usagePlan.usagePlanId}/keys`),
          gateway(`/restapis/${props.restApi.restApiId}/stages/${props.restApi.deploymentStage.stageName}/cache/authorizers`),
        ],
      }),
    );

    // Sign-in is the console's own (a session cookie, DESIGN.md "Publisher console"): the URL is public like the API.
    this.url = this.function.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
    this.origin = new origins.FunctionUrlOrigin(this.url, { readTimeout: Duration.seconds(30) });

    Validations.of(this.function).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${stack.resolve(stack.getLogicalId(props.scripts.bucket.node.defaultChild as never)) as string}.Arn>/scripts/*/*.luau]`,
        reason: "A committed upload is stored as its new version's script, under a version id made at the commit: any script object, and only those.",
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${stack.resolve(stack.getLogicalId(props.scripts.bucket.node.defaultChild as never)) as string}.Arn>/uploads/*/*]`,
        reason:
          'Staged uploads are named by a fresh upload id under their project: the console puts (presigned), reads and deletes any of them, and only those.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::${Token.isUnresolved(apiKeys) ? 'arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*' : apiKeys}]`,
        reason: "A token revoked in the console deletes its API key, whose id API Gateway chose at the token's creation.",
      },
    );
  }
}
