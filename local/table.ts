import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, TABLE } from '#adapters/table-definition';

/**
 * The service's table from the same definition the CDK stack deploys, with TTL on as in AWS.
 * A table that already exists (a persisted DynamoDB Local folder) is left as it is.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<{ created: boolean }> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return { created: false };
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: tableName });
  await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }));
  return { created: true };
}
