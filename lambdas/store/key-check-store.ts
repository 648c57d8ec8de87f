import { type AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type CountedCheck, type KeyState, refusalOf } from '#domain/key-check';
import type { KeyCheckStore } from '#domain/ports';
import { rateWindowAt } from '#domain/rate-limit';
import { keyOf } from './layout';
import type { Item } from './paging';

/** Rounds of both writes at one check: a minute turning over between them sends a check round once more. */
const CHECK_ATTEMPTS = 3;

/**
 * The key may run, stated as a condition on its own item: this project's key with this hash, not revoked, not
 * expired, under its cap. DynamoDB evaluates a condition against the item's latest committed state, so a check
 * after a revoke's 200 always sees the revoke: no cache, replica or index is read.
 */
const MAY_RUN =
  'keyHash = :hash AND projectId = :project AND revoked = :zero AND expires_at > :now AND (attribute_type(max_uses, :nullType) OR current_uses < max_uses)';

/** Keys whose open window a store remembers: enough for a container's busy keys, and a few hundred KB at most. */
const WINDOWS_REMEMBERED = 10_000;

/**
 * The check as conditional writes on the key item, which also holds the key's current one-minute window of checks
 * (`checkWindow`, `checkCount`). One write opens the window and counts the use, another counts within the open
 * window; a failed condition returns the item as it was, which says why: a refusal (no use counted), the key's
 * limit reached, or the other write's turn. Which write goes first is this container's memory of the key's
 * window, so a check costs one write unless the key was last checked on another container this minute. The
 * memory only orders the writes: both are conditional on the key's state, so it can never admit a key.
 */
export class DynamoKeyCheckStore implements KeyCheckStore {
  private readonly openWindows = new Map<string, number>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async checkAndCount(check: { projectId: string; keyId: string; keyHash: string; now: number; perKeyPerMinute: number }): Promise<CountedCheck> {
    const { projectId, keyId, keyHash, now, perKeyPerMinute } = check;
    const window = rateWindowAt(now);
    const open: CountingWrite = {
      update: 'SET current_uses = current_uses + :one, checkWindow = :window, checkCount = :one',
      // A window from another container's clock a little ahead counts as this one: the `within` write takes it.
      condition: 'attribute_not_exists(checkWindow) OR checkWindow < :window',
      values: { ':window': window.start },
    };
    const within: CountingWrite = {
      update: 'SET current_uses = current_uses + :one, checkCount = checkCount + :one',
      condition: 'checkWindow >= :window AND checkCount < :limit',
      values: { ':window': window.start, ':limit': perKeyPerMinute },
    };
    const writes = this.openWindows.get(keyId) === window.start ? [within, open] : [open, within];
    for (let attempt = 1; attempt <= CHECK_ATTEMPTS; attempt++) {
      for (const write of writes) {
        const result = await this.count(check, write);
        if (result.counted) {
          this.remember(keyId, window.start);
          return { outcome: 'counted', keyId, key: result.key };
        }
        const refused = refusalOf(result.key, projectId, keyHash, now);
        if (refused) return { outcome: 'refused', code: refused, keyId };
        // The key may run and this minute's window is open, so `within` failed on the count: the limit is reached.
        if (write === within && result.window !== undefined && result.window >= window.start) {
          this.remember(keyId, window.start);
          return { outcome: 'key_rate_limited', retryAfterSeconds: window.resetSeconds };
        }
      }
    }
    throw new Error(`Key check of ${keyId} did not settle in ${CHECK_ATTEMPTS} attempts`);
  }

  /** Strongly consistent, so a revoke that answered 200 is seen: a fetch with nothing to serve still refuses a revoked key. */
  async peek(keyId: string): Promise<KeyState | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
    return Item && toKeyState(Item);
  }

  private remember(keyId: string, windowStart: number): void {
    this.openWindows.delete(keyId);
    this.openWindows.set(keyId, windowStart);
    // A Map iterates in insertion order: the first entry is the key remembered longest ago.
    if (this.openWindows.size > WINDOWS_REMEMBERED) this.openWindows.delete(this.openWindows.keys().next().value as string);
  }

  /** One conditional write that counts a use; the key's state after it, or as it was when the condition failed. */
  private async count(
    check: { projectId: string; keyId: string; keyHash: string; now: number },
    write: CountingWrite,
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

/** One of the two ways a check counts a use: an update and the condition it holds on besides MAY_RUN. */
interface CountingWrite {
  update: string;
  condition: string;
  values: Record<string, unknown>;
}

function toKeyState(item: Item): KeyState {
  return {
    projectId: String(item.projectId),
    keyHash: String(item.keyHash ?? ''),
    revoked: item.revoked === 1,
    expiresAt: Number(item.expires_at),
    maxUses: typeof item.max_uses === 'number' ? item.max_uses : null,
    currentUses: Number(item.current_uses ?? 0),
    watermark: String(item.watermark ?? ''),
  };
}
