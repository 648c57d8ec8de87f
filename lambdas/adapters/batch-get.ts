import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { backoff } from './conditions';
import type { ItemKey } from './layout';
import type { Item } from './paging';

/** BatchGetItem takes at most 100 keys per request. */
const BATCH_GET_LIMIT = 100;
const BATCH_GET_ATTEMPTS = 8;

/** The map key `batchGetConsistent` files an item under. */
export const itemKeyId = (key: ItemKey): string => JSON.stringify([key.pk, key.sk]);

/**
 * Items by key (missing ones absent from the map), 100 keys per request, all requests at once, unprocessed keys
 * retried with backoff. Reads are consistent: callers decide on what was written a moment ago (a revoke, a
 * last-seen time), which an index or an eventually consistent read may not show yet. `projection` names
 * attributes besides pk and sk; `names` maps the `#placeholders` it uses.
 */
export async function batchGetConsistent(
  db: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly ItemKey[],
  projection?: { expression: string; names?: Record<string, string> },
): Promise<Map<string, Item>> {
  const unique = [...new Map(keys.map((key) => [itemKeyId(key), { pk: key.pk, sk: key.sk }])).values()];
  const chunks = Array.from({ length: Math.ceil(unique.length / BATCH_GET_LIMIT) }, (_, i) => unique.slice(i * BATCH_GET_LIMIT, (i + 1) * BATCH_GET_LIMIT));
  const found = new Map<string, Item>();
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: Item[] = chunk;
      for (let attempt = 1; pending.length > 0; attempt++) {
        if (attempt > BATCH_GET_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed after ${BATCH_GET_ATTEMPTS} attempts`);
        if (attempt > 1) await backoff(attempt);
        const { Responses, UnprocessedKeys } = await db.send(
          new BatchGetCommand({
            RequestItems: {
              [tableName]: {
                Keys: pending,
                ConsistentRead: true,
                ...(projection && { ProjectionExpression: `pk, sk, ${projection.expression}`, ExpressionAttributeNames: projection.names }),
              },
            },
          }),
        );
        for (const item of Responses?.[tableName] ?? []) found.set(itemKeyId({ pk: String(item.pk), sk: String(item.sk) }), item);
        pending = UnprocessedKeys?.[tableName]?.Keys ?? [];
      }
    }),
  );
  return found;
}
