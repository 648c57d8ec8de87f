import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localClientConfig } from '../../local/dynamodb-local';

type Item = Record<string, AttributeValue>;

interface StreamRecord {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  dynamodb: { Keys: Item; NewImage?: Item; OldImage?: Item; StreamViewType: string };
}

/**
 * DynamoDB Streams over its JSON protocol, because @aws-sdk/client-dynamodb-streams is not a dependency.
 * DynamoDB Local wants credentials named in the Authorization header but does not check the signature.
 */
async function streamsApi<Output>(endpoint: string, operation: string, input: object): Promise<Output> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDBStreams_20120810.${operation}`,
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(input),
  });
  const body: unknown = await response.json();
  if (!response.ok) throw new Error(`DynamoDB Streams ${operation} failed (${response.status}): ${JSON.stringify(body)}`);
  return body as Output;
}

/** Every record the stream holds, read from the start of each shard. */
async function readStream(endpoint: string, streamArn: string): Promise<StreamRecord[]> {
  const { StreamDescription } = await streamsApi<{ StreamDescription: { Shards: { ShardId: string }[] } }>(
    endpoint,
    'DescribeStream',
    { StreamArn: streamArn },
  );
  const records: StreamRecord[] = [];
  for (const { ShardId } of StreamDescription.Shards) {
    const { ShardIterator } = await streamsApi<{ ShardIterator: string }>(endpoint, 'GetShardIterator', {
      StreamArn: streamArn,
      ShardId,
      ShardIteratorType: 'TRIM_HORIZON',
    });
    const { Records } = await streamsApi<{ Records: StreamRecord[] }>(endpoint, 'GetRecords', { ShardIterator });
    records.push(...Records);
  }
  return records;
}

describe('DynamoDB Local started by the integration global setup', () => {
  const endpoint = inject('dynamodbEndpoint');
  const client = new DynamoDBClient(localClientConfig(endpoint));
  const tableName = `dynamodb-local-${randomUUID().slice(0, 8)}`;
  let streamArn: string;

  beforeAll(async () => {
    const { TableDescription } = await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'owner', AttributeType: 'S' },
        ],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          { IndexName: 'byOwner', KeySchema: [{ AttributeName: 'owner', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } },
        ],
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    expect(TableDescription?.LatestStreamArn).toBeDefined();
    streamArn = TableDescription?.LatestStreamArn ?? '';
  });

  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
    client.destroy();
  });

  it('answers ListTables at the injected endpoint', async () => {
    expect(process.env.DYNAMODB_ENDPOINT).toBe(endpoint);
    const { TableNames } = await client.send(new ListTablesCommand({}));
    expect(TableNames).toContain(tableName);
  });

  it('serves a global secondary index', async () => {
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'gsi-1' }, owner: { S: 'ada' } } }));
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'byOwner',
        KeyConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': { S: 'ada' } },
      }),
    );
    expect(Items).toEqual([{ pk: { S: 'gsi-1' }, owner: { S: 'ada' } }]);
  });

  it('puts writes on the stream with old and new images', async () => {
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'stream-1' }, owner: { S: 'grace' } } }));
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: 'stream-1' } },
        UpdateExpression: 'SET #owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': { S: 'linus' } },
      }),
    );

    const records = (await readStream(endpoint, streamArn)).filter((record) => record.dynamodb.Keys.pk?.S === 'stream-1');
    expect(records.map(({ eventName, dynamodb }) => ({ eventName, old: dynamodb.OldImage, new: dynamodb.NewImage }))).toEqual([
      { eventName: 'INSERT', old: undefined, new: { pk: { S: 'stream-1' }, owner: { S: 'grace' } } },
      { eventName: 'MODIFY', old: { pk: { S: 'stream-1' }, owner: { S: 'grace' } }, new: { pk: { S: 'stream-1' }, owner: { S: 'linus' } } },
    ]);
    expect(records.every((record) => record.dynamodb.StreamViewType === 'NEW_AND_OLD_IMAGES')).toBe(true);
  });
});
