import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createStores, type Stores } from '#adapters/stores';
import { createTableInput } from '#adapters/table-definition';

export const BENCH_REGION = 'us-east-1';

/** What every benchmark runs against: one table on one DynamoDB Local, reached the way the handlers reach it. */
export interface BenchTable {
  endpoint: string;
  tableName: string;
  db: DynamoDBDocumentClient;
  stores: Stores;
}

/** The environment a handler process needs to find the bench table (the same variables the Lambdas read). */
export function handlerEnv(table: Pick<BenchTable, 'endpoint' | 'tableName'>): Record<string, string> {
  return {
    TABLE_NAME: table.tableName,
    // The SDK's own setting for a service endpoint: the bundles read no setting of ours for it.
    AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
    AWS_REGION: BENCH_REGION,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
}

/** Create the table from the stack's own definition and wait until it is usable. */
export async function createBenchTable(endpoint: string, tableName: string): Promise<BenchTable> {
  const config = { ...localDynamoConfig(endpoint), region: BENCH_REGION };
  const control = new DynamoDBClient(config);
  try {
    await control.send(new CreateTableCommand(createTableInput(tableName)));
    for (let attempt = 0; attempt < 100; attempt++) {
      const { Table } = await control.send(new DescribeTableCommand({ TableName: tableName }));
      if (Table?.TableStatus === 'ACTIVE') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    control.destroy();
  }
  const db = createDocumentClient(config);
  return { endpoint, tableName, db, stores: createStores(db, tableName) };
}

export async function deleteBenchTable(table: BenchTable): Promise<void> {
  await table.db.send(new DeleteTableCommand({ TableName: table.tableName }));
  table.db.destroy();
}

/**
 * Tables already on the endpoint. DynamoDB Local (1.25.1) slows every write to a streamed table created after
 * another streamed table whose stream holds many records (measured: 990 keys 0.8 s → 28 s, BatchWriteItem
 * 2,500 → 100 items/s), so the bench wants an endpoint of its own.
 */
export async function existingTables(endpoint: string): Promise<string[]> {
  const client = new DynamoDBClient({ ...localDynamoConfig(endpoint), region: BENCH_REGION });
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    client.destroy();
  }
}
