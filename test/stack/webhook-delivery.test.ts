import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { STREAM_FILTER_PATTERN } from '#adapters/stream-events';
import { KEY_ATTRIBUTE_TYPES } from '#adapters/table-definition';
import { DELIVERY_QUEUE, FANOUT_STREAM } from '#domain/webhooks/delivery-settings';
import { WebhookDelivery } from '#lib/constructs/webhook-delivery';
import { type CfnResource, type GetAtt, type Statement, streamedTestTable, templateOnlyApp } from '#test-support/cdk';

/** A stack holding a streamed TableV2 and the construct, synthesized with cdk.json's flags and no esbuild. */
function synthesize() {
  const app = templateOnlyApp();
  const stack = new Stack(app, 'WebhookDeliveryTest');
  const table = streamedTestTable(stack);
  const webhooks = new WebhookDelivery(stack, 'Webhooks', { table });
  return { app, stack, webhooks, template: Template.fromStack(stack) };
}

let built: ReturnType<typeof synthesize>;
let resources: Record<string, CfnResource>;

beforeAll(() => {
  built = synthesize();
  resources = built.template.toJSON().Resources as Record<string, CfnResource>;
}, 120_000);

const logicalId = (construct: { node: { defaultChild?: unknown } }) => built.stack.getLogicalId(construct.node.defaultChild as never);
const resource = (id: string) => {
  const found = resources[id];
  if (!found) throw new Error(`No resource ${id}`);
  return found;
};
const queueIds = () => ({
  queue: logicalId(built.webhooks.queue),
  dlq: logicalId(built.webhooks.deadLetterQueue),
  fanoutFailures: logicalId(built.webhooks.fanoutFailureQueue),
});
const arnOf = (id: string): GetAtt => ({ 'Fn::GetAtt': [id, 'Arn'] });
const tableId = () => Object.entries(resources).find(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable')?.[0] ?? '';

/** Every statement of the policies attached to a function's role. */
function statementsOf(fn: 'fanoutFunction' | 'deliveryFunction'): Statement[] {
  const functionId = logicalId(built.webhooks[fn]);
  const roleId = (resource(functionId).Properties.Role as GetAtt)['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}
const actions = (statement: Statement) => [statement.Action].flat();
const statementsWith = (fn: 'fanoutFunction' | 'deliveryFunction', prefix: string) =>
  statementsOf(fn).filter((statement) => actions(statement).some((action) => action.startsWith(prefix)));

function mappingOf(fn: 'fanoutFunction' | 'deliveryFunction'): Record<string, unknown> {
  const functionId = logicalId(built.webhooks[fn]);
  const mappings = Object.values(resources).filter(
    (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && (r.Properties.FunctionName as { Ref: string }).Ref === functionId,
  );
  expect(mappings).toHaveLength(1);
  return mappings[0]?.Properties ?? {};
}

describe('delivery queue and DLQ', () => {
  it('gives the queue a visibility timeout of at least 6× the delivery function timeout', () => {
    const timeout = resource(logicalId(built.webhooks.deliveryFunction)).Properties.Timeout as number;
    const visibility = resource(queueIds().queue).Properties.VisibilityTimeout as number;
    expect(visibility).toBeGreaterThanOrEqual(6 * timeout);
  });

  it('redrives to the DLQ after at least 5 receives', () => {
    const { queue, dlq } = queueIds();
    expect(resource(queue).Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: arnOf(dlq), maxReceiveCount: DELIVERY_QUEUE.maxReceiveCount });
    expect(DELIVERY_QUEUE.maxReceiveCount).toBeGreaterThanOrEqual(5);
  });

  it('encrypts every queue with SQS-managed keys and refuses any request without TLS', () => {
    const ids = Object.values(queueIds());
    for (const id of ids) expect(resource(id).Properties.SqsManagedSseEnabled).toBe(true);
    const policies = Object.values(resources).filter((r) => r.Type === 'AWS::SQS::QueuePolicy');
    const denied = policies.flatMap((policy) =>
      (policy.Properties.PolicyDocument as { Statement: (Statement & { Principal: unknown })[] }).Statement.filter(
        (statement) => statement.Effect === 'Deny' && statement.Condition?.Bool?.['aws:SecureTransport'] === ('false' as never),
      ).map((statement) => (statement.Resource as GetAtt)['Fn::GetAtt'][0]),
    );
    expect(denied.sort()).toEqual([...ids].sort());
  });

  it('alarms as soon as the DLQ or the fan-out failure queue holds a message', () => {
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    const watched = alarms.map((alarm) => {
      expect(alarm.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      return ((alarm.Properties.Dimensions as { Value: { 'Fn::GetAtt': [string, string] } }[])[0]?.Value['Fn::GetAtt'] ?? [])[0];
    });
    expect(watched.sort()).toEqual([queueIds().dlq, queueIds().fanoutFailures].sort());
  });
});

describe('fan-out on the table stream', () => {
  it('reads the stream filtered to inserted VERSION and EVENT items', () => {
    const mapping = mappingOf('fanoutFunction');
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [tableId(), 'StreamArn'] });
    expect(mapping.FilterCriteria).toEqual({ Filters: [{ Pattern: JSON.stringify(STREAM_FILTER_PATTERN) }] });
    expect(JSON.parse(JSON.stringify(STREAM_FILTER_PATTERN))).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { entity: { S: ['VERSION', 'EVENT'] } } },
    });
  });

  it('reports failures per record, bisects, retries a bounded number of times and sets failed batches aside', () => {
    expect(mappingOf('fanoutFunction')).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: FANOUT_STREAM.retryAttempts,
      MaximumRecordAgeInSeconds: FANOUT_STREAM.maxRecordAgeSeconds,
      StartingPosition: 'LATEST',
      DestinationConfig: { OnFailure: { Destination: arnOf(queueIds().fanoutFailures) } },
    });
    expect(FANOUT_STREAM.retryAttempts).toBe(5);
  });

  it('may only Query and GetItem in PROJECT# partitions, and send to the delivery queue', () => {
    const table = statementsWith('fanoutFunction', 'dynamodb:').filter(
      (statement) => !actions(statement).some((a) => /Stream|GetRecords|GetShardIterator/.test(a)),
    );
    expect(table).toEqual([
      {
        Action: ['dynamodb:GetItem', 'dynamodb:Query'],
        Effect: 'Allow',
        Resource: arnOf(tableId()),
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PROJECT#*'] } },
      },
    ]);
    const send = statementsWith('fanoutFunction', 'sqs:SendMessage');
    expect(send.flatMap((statement) => [statement.Resource].flat())).toContainEqual(arnOf(queueIds().queue));
    expect(statementsWith('fanoutFunction', 'sqs:').every((statement) => !actions(statement).includes('sqs:ReceiveMessage'))).toBe(true);
  });

  it('points the fan-out at the table and the queue', () => {
    const env = (resource(logicalId(built.webhooks.fanoutFunction)).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.TABLE_NAME).toEqual({ Ref: tableId() });
    expect(env.QUEUE_URL).toEqual({ Ref: queueIds().queue });
  });
});

describe('delivery from the queue', () => {
  it('consumes the queue in batches of 10 with partial batch responses', () => {
    expect(mappingOf('deliveryFunction')).toMatchObject({
      EventSourceArn: arnOf(queueIds().queue),
      BatchSize: DELIVERY_QUEUE.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(DELIVERY_QUEUE.batchSize).toBe(10);
  });

  it("may GetItem/UpdateItem webhook configs naming only enabled, url (and updated_at), never a project's owner or plan, and PutItem/UpdateItem delivery claims, nothing else in the table", () => {
    expect(statementsWith('deliveryFunction', 'dynamodb:')).toEqual([
      {
        Action: 'dynamodb:GetItem',
        Effect: 'Allow',
        Resource: arnOf(tableId()),
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PROJECT#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...Object.keys(KEY_ATTRIBUTE_TYPES), 'enabled', 'url'] },
          // Every grant that lists attributes pins ReturnValues (issue 31), a read too, where none can be asked.
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      },
      {
        Action: 'dynamodb:UpdateItem',
        Effect: 'Allow',
        Resource: arnOf(tableId()),
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PROJECT#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...Object.keys(KEY_ATTRIBUTE_TYPES), 'enabled', 'updated_at', 'url'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      },
      {
        Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        Effect: 'Allow',
        Resource: arnOf(tableId()),
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DELIVERY#*'] } },
      },
    ]);
  });

  it('may change message visibility on the queue, and send to the DLQ and to its own queue (delayed copies after a 429) only', () => {
    const { queue, dlq } = queueIds();
    const visibility = statementsWith('deliveryFunction', 'sqs:').filter((statement) => actions(statement).includes('sqs:ChangeMessageVisibility'));
    expect(visibility.map((statement) => statement.Resource)).toEqual([arnOf(queue)]);
    const send = statementsWith('deliveryFunction', 'sqs:').filter((statement) => actions(statement).includes('sqs:SendMessage'));
    const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
    expect(send.flatMap((statement) => [statement.Resource].flat()).sort(byText)).toEqual([arnOf(dlq), arnOf(queue)].sort(byText));
  });

  it('is configured with the Discord API base, the queues and the claim staleness of one visibility timeout', () => {
    const env = (resource(logicalId(built.webhooks.deliveryFunction)).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const { queue, dlq } = queueIds();
    expect(env).toMatchObject({
      DISCORD_API_BASE: 'https://discord.com/api/v10',
      QUEUE_URL: { Ref: queue },
      DEAD_LETTER_QUEUE_URL: { Ref: dlq },
      CLAIM_STALE_AFTER_SECONDS: String(resource(queue).Properties.VisibilityTimeout),
      TABLE_NAME: { Ref: tableId() },
    });
  });
});

describe('cdk-nag', () => {
  it('raises no cdk-nag AwsSolutions finding that is not acknowledged with a reason', () => {
    const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.stack);
    const mine = report.violations
      .map((violation) => ({
        rule: violation.ruleName,
        paths: violation.violatingResources.map((r) => r.constructPath).filter((path) => path?.includes('/Webhooks/')),
      }))
      .filter((violation) => violation.paths.length > 0);
    expect(mine).toEqual([]);
  });
});
