import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECK_STREAM_FILTER_PATTERN } from '#adapters/check-stream';
import { CHECK_RECORD_UNREADABLE, CHECK_STREAM, TELEMETRY_QUEUE } from '#adapters/telemetry-queue';
import { Analytics } from '#lib/constructs/analytics';
import { type CfnResource, type GetAtt, type Statement, streamedTestTable, templateOnlyApp } from '#test-support/cdk';

type FunctionName = 'ingestFunction' | 'queueIngestFunction' | 'streamIngestFunction' | 'dailyDetectorFunction' | 'alertDigestFunction';

/** A stack holding a TableV2 and the construct, synthesized with cdk.json's flags and no esbuild. */
function synthesize() {
  const app = templateOnlyApp();
  const stack = new Stack(app, 'AnalyticsTest');
  const table = streamedTestTable(stack);
  const analytics = new Analytics(stack, 'Analytics', { table });
  return { app, stack, analytics, template: Template.fromStack(stack) };
}

let built: ReturnType<typeof synthesize>;
let resources: Record<string, CfnResource>;

beforeAll(() => {
  built = synthesize();
  resources = built.template.toJSON().Resources as Record<string, CfnResource>;
}, 120_000);

const logicalId = (construct: { node: { defaultChild?: unknown } }) => built.stack.getLogicalId(construct.node.defaultChild as never);
const functionId = (fn: FunctionName) => logicalId(built.analytics[fn]);
const resource = (id: string) => {
  const found = resources[id];
  if (!found) throw new Error(`No resource ${id}`);
  return found;
};
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const tableArn = () => ({ 'Fn::GetAtt': [ofType('AWS::DynamoDB::GlobalTable')[0]?.[0] ?? '', 'Arn'] });

/** Every statement of the policies attached to a function's role. */
function statementsOf(fn: FunctionName): Statement[] {
  const roleId = (resource(functionId(fn)).Properties.Role as GetAtt)['Fn::GetAtt'][0];
  return ofType('AWS::IAM::Policy')
    .filter(([, r]) => (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}
const dynamoStatements = (fn: FunctionName) =>
  statementsOf(fn)
    .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')))
    .map((statement) => ({
      actions: [statement.Action].flat().sort(),
      resource: statement.Resource,
      leadingKeys: statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'],
    }));

describe('Analytics construct', () => {
  const ruleOf = (fn: FunctionName) => ofType('AWS::Events::Rule').find(([, rule]) => JSON.stringify(rule.Properties.Targets).includes(`"${functionId(fn)}"`));

  it('runs the daily detector on an EventBridge schedule at 00:05 UTC every day', () => {
    expect(ofType('AWS::Events::Rule')).toHaveLength(2);
    const [, rule] = ruleOf('dailyDetectorFunction') ?? [];
    expect(rule?.Properties).toMatchObject({
      ScheduleExpression: 'cron(5 0 * * ? *)',
      State: 'ENABLED',
      Targets: [
        { Arn: { 'Fn::GetAtt': [functionId('dailyDetectorFunction'), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 4, MaximumEventAgeInSeconds: 21_600 } },
      ],
    });
  });

  it('runs the alert digest on an EventBridge schedule at minute 2 of every hour', () => {
    const [, rule] = ruleOf('alertDigestFunction') ?? [];
    expect(rule?.Properties).toMatchObject({
      ScheduleExpression: 'cron(2 * * * ? *)',
      State: 'ENABLED',
      Targets: [
        { Arn: { 'Fn::GetAtt': [functionId('alertDigestFunction'), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 4, MaximumEventAgeInSeconds: 21_600 } },
      ],
    });
  });

  it('lets only each schedule invoke its function, and nothing invoke the ingest function yet', () => {
    const permissions = ofType('AWS::Lambda::Permission').map(([, p]) => p.Properties);
    expect(permissions).toEqual(
      (['dailyDetectorFunction', 'alertDigestFunction'] as const).map((fn) => ({
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [functionId(fn), 'Arn'] },
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [ruleOf(fn)?.[0], 'Arn'] },
      })),
    );
  });

  it('exposes no HTTP entry: no API, no function URL', () => {
    expect(ofType('AWS::ApiGateway::RestApi')).toEqual([]);
    expect(ofType('AWS::ApiGatewayV2::Api')).toEqual([]);
    expect(ofType('AWS::Lambda::Url')).toEqual([]);
  });

  it('builds the functions from their analytics handlers on Node 22 with the table name', () => {
    for (const fn of ['ingestFunction', 'dailyDetectorFunction', 'alertDigestFunction'] as const) {
      const props = resource(functionId(fn)).Properties;
      expect(props).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' });
      expect((props.Environment as { Variables: Record<string, unknown> }).Variables.TABLE_NAME).toEqual({ Ref: ofType('AWS::DynamoDB::GlobalTable')[0]?.[0] });
    }
  });

  it.each(['ingestFunction', 'queueIngestFunction'] as const)('grants %s only the item actions ingest sends, on the table only, by partition prefix', (fn) => {
    expect(dynamoStatements(fn)).toEqual([
      { actions: ['dynamodb:UpdateItem'], resource: tableArn(), leadingKeys: ['EXECUTIONS#*', 'TELEMETRY#*', 'VALIDATIONS#*', 'ALERTS#*', 'STATS#*'] },
      { actions: ['dynamodb:PutItem'], resource: tableArn(), leadingKeys: ['EVENTS#*', 'STATS_UNIT#*'] },
      { actions: ['dynamodb:BatchGetItem'], resource: tableArn(), leadingKeys: ['TELEMETRY#*', 'EVENTS#*', 'STATS#*'] },
      { actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'], resource: tableArn(), leadingKeys: ['PROJECT#*', 'KEY#*'] },
    ]);
  });

  it('lets no analytics function write a project or a key record, nor read a partition outside its grants', () => {
    const writes = /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/;
    for (const fn of ['ingestFunction', 'queueIngestFunction', 'dailyDetectorFunction', 'alertDigestFunction'] as const) {
      const statements = dynamoStatements(fn);
      const written = statements
        .filter((statement) => statement.actions.some((action) => writes.test(action)))
        .flatMap((statement) => statement.leadingKeys ?? ['(any)']);
      expect(written).not.toContain('PROJECT#*');
      expect(written).not.toContain('KEY#*');
      expect(
        written.every((prefix) => ['EXECUTIONS#*', 'TELEMETRY#*', 'VALIDATIONS#*', 'EVENTS#*', 'ALERTS#*', 'STATS#*', 'STATS_UNIT#*'].includes(prefix)),
      ).toBe(true);
      // Every statement is scoped by partition: none without a LeadingKeys condition.
      expect(statements.every((statement) => (statement.leadingKeys?.length ?? 0) > 0)).toBe(true);
    }
  });

  it("ingests counted checks' telemetry off the table's stream, filtered to key items' MODIFY records, retrying a failing batch whole (the stats' delivery unit), then setting it aside with an alarm", () => {
    const mapping = ofType('AWS::Lambda::EventSourceMapping').find(
      ([, m]) => (m.Properties.FunctionName as { Ref: string }).Ref === functionId('streamIngestFunction'),
    );
    expect(mapping?.[1].Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [ofType('AWS::DynamoDB::GlobalTable')[0]?.[0], 'StreamArn'] },
      BatchSize: CHECK_STREAM.batchSize,
      MaximumBatchingWindowInSeconds: CHECK_STREAM.maxBatchingWindowSeconds,
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(CHECK_STREAM_FILTER_PATTERN) }] },
      BisectBatchOnFunctionError: false,
      MaximumRetryAttempts: CHECK_STREAM.retryAttempts,
      MaximumRecordAgeInSeconds: CHECK_STREAM.maxRecordAgeSeconds,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(built.analytics.checkStreamFailureQueue), 'Arn'] } } },
    });
    expect(JSON.stringify(CHECK_STREAM_FILTER_PATTERN)).toBe('{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"entity":{"S":["KEY"]}}}}');
    const alarms = built.analytics.alarms.map((alarm) => resource(logicalId(alarm)).Properties);
    expect(alarms).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(built.analytics.checkStreamFailureQueue), 'QueueName'] } }],
        }),
        expect.objectContaining({ MetricName: 'IteratorAge', Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId('streamIngestFunction') } }] }),
        expect.objectContaining({ Namespace: 'ScriptDistribution', MetricName: 'CheckRecordUnreadable', Threshold: 0 }),
      ]),
    );
    expect(ofType('AWS::Logs::MetricFilter').map(([, filter]) => filter.Properties.FilterPattern)).toContain(`{ $.message = "${CHECK_RECORD_UNREADABLE}" }`);
    // The stream ingest writes only telemetry partitions, like the other ingests; it reads versions to verify them.
    // (Its stream statement, added by the event source, names the stream, not items.)
    const statements = dynamoStatements('streamIngestFunction').filter((statement) => !statement.actions.includes('dynamodb:GetRecords'));
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.every((statement) => (statement.leadingKeys?.length ?? 0) > 0)).toBe(true);
    expect(
      statements.filter((statement) => statement.actions.includes('dynamodb:UpdateItem')).flatMap((statement) => statement.leadingKeys ?? []),
    ).not.toContain('KEY#*');
  });

  it("ingests the loader check's telemetry queue in batches, and sets aside what keeps failing in a DLQ with an alarm", () => {
    const mapping = ofType('AWS::Lambda::EventSourceMapping').find(
      ([, m]) => (m.Properties.FunctionName as { Ref: string }).Ref === functionId('queueIngestFunction'),
    );
    expect(mapping?.[1].Properties).toMatchObject({
      FunctionName: { Ref: functionId('queueIngestFunction') },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(built.analytics.telemetryQueue), 'Arn'] },
      BatchSize: TELEMETRY_QUEUE.batchSize,
      MaximumBatchingWindowInSeconds: TELEMETRY_QUEUE.maxBatchingWindowSeconds,
    });
    expect(resource(logicalId(built.analytics.telemetryQueue)).Properties).toMatchObject({
      VisibilityTimeout: TELEMETRY_QUEUE.visibilityTimeoutSeconds,
      RedrivePolicy: {
        maxReceiveCount: TELEMETRY_QUEUE.maxReceiveCount,
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(built.analytics.telemetryDeadLetterQueue), 'Arn'] },
      },
      SqsManagedSseEnabled: true,
    });
    const [alarm] = built.analytics.alarms;
    expect(resource(logicalId(alarm!)).Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 0,
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(built.analytics.telemetryDeadLetterQueue), 'QueueName'] } }],
    });
  });

  it('grants the daily detector only queries of the daily counters and puts of event items', () => {
    expect(dynamoStatements('dailyDetectorFunction')).toEqual([
      { actions: ['dynamodb:Query'], resource: tableArn(), leadingKeys: ['EXECUTIONS#*'] },
      { actions: ['dynamodb:PutItem'], resource: tableArn(), leadingKeys: ['EVENTS#*'] },
    ]);
  });

  it('grants the alert digest only queries of the alert counters and puts of event items', () => {
    expect(dynamoStatements('alertDigestFunction')).toEqual([
      { actions: ['dynamodb:Query'], resource: tableArn(), leadingKeys: ['ALERTS#*'] },
      { actions: ['dynamodb:PutItem'], resource: tableArn(), leadingKeys: ['EVENTS#*'] },
    ]);
  });

  it('grants no function a scan, a delete, a batch write or an index', () => {
    const granted = (['ingestFunction', 'queueIngestFunction', 'dailyDetectorFunction', 'alertDigestFunction'] as const).flatMap((fn) => dynamoStatements(fn));
    expect(granted.flatMap((statement) => statement.actions)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/Scan|Delete|BatchWrite|TransactWrite|\*/)]),
    );
    expect(granted.every((statement) => JSON.stringify(statement.resource) === JSON.stringify(tableArn()))).toBe(true);
  });

  it('passes the AwsSolutions cdk-nag checks', () => {
    const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.stack);
    const mine = report.violations
      .map((violation) => ({
        rule: violation.ruleName,
        paths: violation.violatingResources.map((r) => r.constructPath).filter((path) => path?.includes('/Analytics/')),
      }))
      .filter((violation) => violation.paths.length > 0);
    expect(mine).toEqual([]);
  });
});
