import { randomUUID } from 'node:crypto';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ifCondition } from './conditions';
import { ENTITY, keyOf } from './layout';
import { TABLE } from './table-definition';

/**
 * Numbering writers (key issuance, version upload) of one project take turns through a lease item, so that
 * their transactions on the project's counter never race: racing transactions fail each other and, with enough
 * writers, run out of retries. A lease outlives any holder's few transactions; a holder that died leaves it
 * to expire, and the counter's own condition keeps numbers dense and unique even then.
 */
export const SEQUENCE_LEASE = {
  seconds: 30,
  /** A writer waits this long for its turn, then fails saying so: longer than a crashed holder's lease. */
  waitMs: 90_000,
  /** Pause between tries to take the lease, doubling from `firstPauseMs` up to `maxPauseMs`, with jitter. */
  firstPauseMs: 20,
  maxPauseMs: 250,
} as const;

/**
 * Run `work` holding the project's sequence lease (SEQUENCE_LEASE), waiting for it while another writer
 * holds it. The lease is a conditional put of its own item, not of the project, so waiting writers never
 * touch the item the holder's transactions write.
 */
export async function inTurn<T>(db: DynamoDBDocumentClient, tableName: string, projectId: string, work: () => Promise<T>): Promise<T> {
  const holder = randomUUID();
  const lease = keyOf.sequenceLease(projectId);
  const giveUpAt = Date.now() + SEQUENCE_LEASE.waitMs;
  for (let attempt = 0; ; attempt++) {
    const now = Math.floor(Date.now() / 1000);
    const taken = await ifCondition(
      db.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...lease, entity: ENTITY.sequenceLease, holder, until: now + SEQUENCE_LEASE.seconds, [TABLE.ttlAttribute]: now + 2 * SEQUENCE_LEASE.seconds },
          ConditionExpression: 'attribute_not_exists(pk) OR #until < :now',
          ExpressionAttributeNames: { '#until': 'until' },
          ExpressionAttributeValues: { ':now': now },
        }),
      ),
    );
    if (taken) break;
    if (Date.now() >= giveUpAt) {
      throw new Error(`Another writer kept project ${projectId}'s numbering busy for ${SEQUENCE_LEASE.waitMs / 1000} s; nothing was written, try again`);
    }
    const pause = Math.min(SEQUENCE_LEASE.maxPauseMs, SEQUENCE_LEASE.firstPauseMs * 2 ** attempt);
    await new Promise((resolve) => setTimeout(resolve, pause / 2 + Math.random() * (pause / 2)));
  }
  try {
    return await work();
  } finally {
    // Only our own lease: if it expired and another writer took it, that one's stays.
    await ifCondition(
      db.send(
        new DeleteCommand({
          TableName: tableName,
          Key: lease,
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: { ':holder': holder },
        }),
      ),
    );
  }
}
