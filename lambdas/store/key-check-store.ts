import { type AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type CountedCheck, type KeyState, refusalOf } from '#domain/key-check';
import type { KeyCheckStore } from '#domain/ports';
import { rateWindowAt } from '#domain/rate-limit';
import { keyOf } from './layout';
import type { Item } from './paging';

/** Attempts at one check: a minute turning over between the two writes of a check sends it round once more. */
const CHECK_ATTEMPTS = 3;

/**
 * The key may run, stated as a condition on its own item: this project's key with this hash, not revoked, not
 * expired, under its cap. DynamoDB evaluates a condition against the item's latest committed state, so a check
 * after a revoke's 200 always sees the revoke: no cache, replica or index is read.
 */
const MAY_RUN =
  'keyHash = :hash AND projectId = :project AND revoked = :zero AND expires_at > :now AND (attribute_type(max_uses, :nullType) OR current_uses < max_uses)';

/**
 * The check as conditional writes on the key item, which also holds the key's current one-minute window of checks
 * (`checkWindow`, `checkCount`). A key checked at most once a minute, the usual case, costs one write that opens
 * the window and counts the use; a busy key costs a second write within the open window. A failed condition
 * returns the item as it was, which says why: a refusal (no use counted), or the key's limit reached.
 */
export class DynamoKeyCheckStore implements KeyCheckStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async checkAndCount(check: { projectId: string; keyId: string; keyHash: string; now: number; perKeyPerMinute: number }): Promise<CountedCheck> {
    const { projectId, keyId, keyHash, now, perKeyPerMinute } = check;
    const window = rateWindowAt(now);
    for (let attempt = 1; attempt <= CHECK_ATTEMPTS; attempt++) {
      const opened = await this.count(check, {
        update: 'SET current_uses = current_uses + :one, checkWindow = :window, checkCount = :one',
        // A window from another container's clock a little ahead counts as this one: the `within` write takes it.
        condition: 'attribute_not_exists(checkWindow) OR checkWindow < :window',
        values: { ':window': window.start },
      });
      if (opened.counted) return { outcome: 'counted', keyId, key: opened.key };
      const refused = refusalOf(opened.key, projectId, keyHash, now);
      if (refused) return { outcome: 'refused', code: refused, keyId };

      const within = await this.count(check, {
        update: 'SET current_uses = current_uses + :one, checkCount = checkCount + :one',
        condition: 'checkWindow >= :window AND checkCount < :limit',
        values: { ':window': window.start, ':limit': perKeyPerMinute },
      });
      if (within.counted) return { outcome: 'counted', keyId, key: within.key };
      const refusedNow = refusalOf(within.key, projectId, keyHash, now);
      if (refusedNow) return { outcome: 'refused', code: refusedNow, keyId };
      if (within.window !== undefined && within.window >= window.start) return { outcome: 'key_rate_limited', retryAfterSeconds: window.resetSeconds };
    }
    throw new Error(`Key check of ${keyId} did not settle in ${CHECK_ATTEMPTS} attempts`);
  }

  /** One conditional write that counts a use; the key's state after it, or as it was when the condition failed. */
  private async count(
    check: { projectId: string; keyId: string; keyHash: string; now: number },
    write: { update: string; condition: string; values: Record<string, unknown> },
  ): Promise<{ counted: true; key: KeyState } | { counted: false; key: KeyState | undefined; window: number | undefined }> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.key(check.keyId),
          UpdateExpression: write.update,
          ConditionExpression: `${MAY_RUN} AND (${write.condition})`,
          ExpressionAttributeValues: {
            ':hash': check.keyHash,
            ':project': check.projectId,
            ':zero': 0,
            ':now': check.now,
            ':nullType': 'NULL',
            ':one': 1,
            ...write.values,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { counted: true, key: toKeyState(Attributes ?? {}) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item ? unmarshall(error.Item as Record<string, AttributeValue>) : undefined;
      return { counted: false, key: old && toKeyState(old), window: typeof old?.checkWindow === 'number' ? old.checkWindow : undefined };
    }
  }
}

function toKeyState(item: Item): KeyState {
  return {
    projectId: String(item.projectId),
    keyHash: String(item.keyHash ?? ''),
    revoked: item.revoked === 1,
    expiresAt: Number(item.expires_at),
    maxUses: typeof item.max_uses === 'number' ? item.max_uses : null,
    currentUses: Number(item.current_uses ?? 0),
  };
}
