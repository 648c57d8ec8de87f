import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { presigningS3Client, S3UploadStaging } from '#adapters/upload-staging';
import { ConsoleApi } from '#lib/constructs/console-api';
import { ScriptBucket } from '#lib/constructs/script-bucket';
import { type CfnResource, type GetAtt, type Statement, streamedTestTable, templateOnlyApp } from '#test-support/cdk';

/** A stack with a table, the scripts bucket (dashboard principal set), a REST API with a usage plan, and the console API. */
function synthesize() {
  const app = templateOnlyApp();
  const stack = new Stack(app, 'ConsoleApiTest', { env: { account: '123456789012', region: 'eu-west-1' } });
  const table = streamedTestTable(stack);
  const scripts = new ScriptBucket(stack, 'ScriptStorage', { dashboardPrincipalArn: 'arn:aws:iam::123456789012:role/dashboard' });
  const restApi = new apigateway.RestApi(stack, 'Api', { cloudWatchRole: false });
  restApi.root.addMethod('GET');
  const usagePlan = restApi.addUsagePlan('UsagePlan', { apiStages: [{ api: restApi, stage: restApi.deploymentStage }] });
  const consoleApi = new ConsoleApi(stack, 'ConsoleApi', { table, scripts, restApi, usagePlan, loaderBaseUrl: 'https://service.example.com' });
  return { app, stack, consoleApi, scripts, template: Template.fromStack(stack) };
}

let built: ReturnType<typeof synthesize>;
let resources: Record<string, CfnResource>;

beforeAll(() => {
  built = synthesize();
  resources = built.template.toJSON().Resources as Record<string, CfnResource>;
}, 120_000);

const logicalId = (construct: { node: { defaultChild?: unknown } }) => built.stack.getLogicalId(construct.node.defaultChild as never);

function statementsOfFunction(): Statement[] {
  const roleId = (resources[logicalId(built.consoleApi.function)]?.Properties.Role as GetAtt | undefined)?.['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

describe('ConsoleApi', () => {
  it('deploys lambdas/functions/console-api.ts with the settings its handler reads', () => {
    const variables =
      (resources[logicalId(built.consoleApi.function)]?.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};
    expect(Object.keys(variables)).toEqual(
      expect.arrayContaining(['TABLE_NAME', 'SCRIPT_BUCKET', 'LOADER_BASE_URL', 'DISCORD_API_BASE', 'USAGE_PLAN_ID', 'REST_API_ID', 'STAGE_NAME']),
    );
    expect(variables.LOADER_BASE_URL).toBe('https://service.example.com');
  });

  it('serves the function on a function URL, the origin the distribution routes /console/api/* to', () => {
    built.template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': [logicalId(built.consoleApi.function), 'Arn'] },
    });
  });

  it('grants the table by partition only: no Scan, every item statement scoped by dynamodb:LeadingKeys', () => {
    const dynamo = statementsOfFunction().filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    expect(dynamo.flatMap((statement) => [statement.Action].flat())).not.toContain('dynamodb:Scan');
    for (const statement of dynamo) expect(statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']?.length).toBeGreaterThan(0);
    const sessions = dynamo.find((statement) => JSON.stringify(statement.Condition).includes('SESSION#*'));
    expect([sessions?.Action].flat().sort()).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    const indexes = dynamo.filter((statement) => JSON.stringify(statement.Resource).includes('/index/')).map((statement) => JSON.stringify(statement.Resource));
    expect(indexes.some((resource) => resource.includes('/index/byDiscordId'))).toBe(true);
  });

  it('may write script objects and put, read and delete staged uploads, and read no script', () => {
    const s3 = statementsOfFunction().filter((statement) => [statement.Action].flat().some((action) => action.startsWith('s3:')));
    const text = JSON.stringify(s3);
    expect(text).toContain('/scripts/*/*.luau');
    expect(text).toContain('/uploads/*/*');
    const reads = s3.filter((statement) => [statement.Action].flat().includes('s3:GetObject'));
    expect(JSON.stringify(reads)).not.toContain('scripts/');
  });

  it("spares the console's role in the bucket's deny of writes by anyone but the dashboard", () => {
    const policy = Object.values(resources).find(
      (r) => r.Type === 'AWS::S3::BucketPolicy' && JSON.stringify(r.Properties).includes('OnlyTheDashboardWritesScripts'),
    );
    const statements = (policy?.Properties.PolicyDocument as { Statement: (Statement & { Sid?: string })[] } | undefined)?.Statement ?? [];
    const deny = statements.find((s) => s.Sid === 'OnlyTheDashboardWritesScripts');
    const spared = JSON.stringify(deny?.Condition?.ArnNotEquals);
    expect(spared).toContain('arn:aws:iam::123456789012:role/dashboard');
    expect(spared).toContain(built.stack.getLogicalId(built.consoleApi.function.role?.node.defaultChild as never));
  });

  it("lets a browser PUT a staged upload from the distribution's origin only, and expires staged files that no commit reached", async () => {
    const bucket = resources[logicalId(built.scripts.bucket)];
    // S3 answers a preflight only when one rule matches the Origin, the method and every requested header
    // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/cors.html); an origin may hold one wildcard
    // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/ManageCorsUsing.html).
    expect(bucket?.Properties.CorsConfiguration).toEqual({
      CorsRules: [{ AllowedHeaders: ['content-type'], AllowedMethods: ['PUT'], AllowedOrigins: ['https://*.cloudfront.net'], MaxAge: 3600 }],
    });
    const cors = bucket?.Properties.CorsConfiguration as { CorsRules: { AllowedHeaders: string[]; AllowedOrigins: string[] }[] } | undefined;
    const rule = cors?.CorsRules[0];
    const allows = (origin: string) =>
      rule?.AllowedOrigins.some((pattern) => new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace('*', '[a-z0-9]+')}$`).test(origin));
    expect(allows('https://d111111abcdef8.cloudfront.net')).toBe(true);
    expect(allows('https://attacker.example')).toBe(false);
    const { headers } = await new S3UploadStaging(
      presigningS3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } }),
      'b',
    ).presign({
      uploadId: 'u1',
      projectId: 'p1',
      sizeBytes: 1,
      sha256: '0'.repeat(64),
      notes: '',
      createdAt: 0,
    });
    expect(Object.keys(headers).map((name) => name.toLowerCase())).toEqual(rule?.AllowedHeaders);
    const rules = (bucket?.Properties.LifecycleConfiguration as { Rules: { Id?: string; Prefix?: string; ExpirationInDays?: number }[] } | undefined)?.Rules;
    expect(rules).toContainEqual(expect.objectContaining({ Id: 'StagedUploads', Prefix: 'uploads/', ExpirationInDays: 1 }));
  });

  it('passes the AwsSolutions cdk-nag checks', () => {
    const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.stack);
    const mine = report.violations
      .map((violation) => ({
        rule: violation.ruleName,
        paths: violation.violatingResources.map((r) => r.constructPath).filter((path) => path?.includes('/ConsoleApi/')),
      }))
      .filter((violation) => violation.paths.length > 0);
    expect(mine).toEqual([]);
  });
});
