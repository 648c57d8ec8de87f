import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Capacity units DynamoDB reported, split by where they were spent: the table itself and each index by name. */
export interface CapacityTally {
  requests: number;
  /**
   * Round trips in a row: requests that started while no other was in flight. Requests sent at once count one, so
   * this is how many DynamoDB round trips the caller waited for one after another.
   */
  inARow: number;
  /**
   * Writes refused by their condition. AWS charges each the write's capacity (1 WCU per KB, on the table only);
   * DynamoDB Local's error carries no ConsumedCapacity, so they are counted here instead.
   */
  conditionFailures: number;
  read: { table: number; indexes: Record<string, number> };
  write: { table: number; indexes: Record<string, number> };
}

interface Capacity {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

// The document client's commands run under the low-level command's name.
const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);

/**
 * A document client that asks DynamoDB for `ReturnConsumedCapacity: INDEXES` on every request and adds up what
 * comes back. DynamoDB Local has no partitions and never throttles, but it does report capacity per table and
 * per index, which is what AWS's per-partition limits are counted in.
 */
export function capacityRecordingClient(config: DynamoDBClientConfig): { db: DynamoDBDocumentClient; take: () => CapacityTally } {
  const client = new DynamoDBClient(config);
  let tally = emptyTally();
  let inFlight = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = 'INDEXES';
      tally.requests++;
      if (inFlight === 0) tally.inARow++;
      inFlight++;
      const result = await next(args)
        .catch((error: unknown) => {
          if (error instanceof Error && (error.name === 'ConditionalCheckFailedException' || error.name === 'TransactionCanceledException'))
            tally.conditionFailures++;
          throw error;
        })
        .finally(() => {
          inFlight--;
        });
      const reported = (result.output as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
      const side = READS.has(context.commandName ?? '') ? tally.read : tally.write;
      for (const capacity of [reported ?? []].flat()) {
        side.table += capacity.Table?.CapacityUnits ?? capacity.CapacityUnits ?? 0;
        for (const [name, index] of Object.entries(capacity.GlobalSecondaryIndexes ?? {}))
          side.indexes[name] = (side.indexes[name] ?? 0) + (index.CapacityUnits ?? 0);
      }
      return result;
    },
    { step: 'initialize', name: 'consumedCapacity' },
  );
  const db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    db,
    take: () => {
      const taken = tally;
      tally = emptyTally();
      return taken;
    },
  };
}

const emptyTally = (): CapacityTally => ({ requests: 0, inARow: 0, conditionFailures: 0, read: { table: 0, indexes: {} }, write: { table: 0, indexes: {} } });

/** Everything an index was charged, across indexes. */
export const indexUnits = (side: CapacityTally['read' | 'write']): number => Object.values(side.indexes).reduce((sum, units) => sum + units, 0);
