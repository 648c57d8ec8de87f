import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CheckWrite, CountedKey, KeyState } from '#domain/key-check';
import { needsBinding } from '#domain/key-check';
import type { KeyCheck, KeyCheckStore } from '#domain/ports';
import { rateWindowAt } from '#domain/rate-limit';
import type { CheckTiming } from '#schemas/telemetry';
import { machineBinding } from './blacklist-store';
import { banOf, boundFingerprints, fingerprintAttribute, keyOf } from './layout';
import type { Item } from './paging';

/**
 * Every attribute of a key item the check's writes name, written or tested in their conditions: the loader
 * function's IAM grant (lib/constructs/loader-check.ts) allows an update naming these and the keys, nothing else
 * (`dynamodb:Attributes` covers a condition's names too, so those it tests are here). A write that names a new
 * attribute adds it here, one line; test/integration/granted-attributes.test.ts fails until it does.
 */
export const KEY_CHECK_ATTRIBUTES = [
  // written: the use count, the last counted check and its telemetry, the key's one-minute window of checks, a bound machine
  'current_uses',
  'last_check_at',
  'lastCheck',
  'checkWindow',
  'checkCount',
  'fingerprints',
  // tested (MAY_RUN and the binding conditions)
  'keyHash',
  'projectId',
  'revoked',
  'ban_reason',
  'ban_until',
  'expires_at',
  'max_uses',
  'max_fingerprints',
] as const;

/**
 * The check reads what it answers with back from its own write, and only that: UPDATED_NEW returns the attributes
 * the update sets, so the counting write also sets COUNTED_RETURNS to themselves. ALL_NEW would return the whole
 * item (note, Discord id, owner fields) under a grant that lists attributes; AWS documents `dynamodb:Attributes` as
 * covering the attributes a request returns, and its examples limit ReturnValues to NONE, UPDATED_OLD, UPDATED_NEW
 * ("Using IAM policy conditions for fine-grained access control",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
 */
export const KEY_CHECK_RETURN_VALUES = ['UPDATED_NEW'] as const;

/** What a counted check answers with that its update does not otherwise write (CountedKey), set to itself. */
const COUNTED_RETURNS = ', expires_at = expires_at, max_uses = max_uses';

/** Watermarks a container remembers (they never change): a key's script fetches read it once per container. */
const WATERMARKS_REMEMBERED = 10_000;

/**
 * Writes one check may take: normally one; a window another container opened, a machine to bind, or a write that
 * raced another check each cost one more, and no check needs more than a few of them.
 */
const CHECK_WRITES = 8;

/**
 * The key may run, stated as a condition on its own item: this project's key with this hash, not revoked, not
 * banned (no ban, or one whose `ban_until` has come), not expired, under its cap; the machine binding's condition
 * (BINDING) adds HWID locked. It is refusalOf (lambdas/domain/key-check.ts) in the table's words: DynamoDB
 * evaluates it against the item's latest committed state, so a check after a revoke's or a ban's 200 always sees
 * it, with no read before the write. test/integration/key-rule.test.ts drives both through one table of cases.
 * A ban without an end has no `ban_until`, and a comparison with a missing attribute is false: banned.
 */
const MAY_RUN =
  'keyHash = :hash AND projectId = :project AND revoked = :zero AND (attribute_not_exists(ban_reason) OR ban_until <= :now) AND expires_at > :now AND (attribute_type(max_uses, :nullType) OR current_uses < max_uses)';

/**
 * Machine binding (DESIGN.md, "Selling keys"), as the two ways a write can treat the asking machine. A key issued
 * with `max_fingerprints` holds a `fingerprints` map (machine → bound_at) from its issue on; a key without one has
 * neither attribute and never gets them. `known` counts a use of an unbound key or of a machine already bound;
 * `bind` binds a new machine while the map has room, in the same write that counts the use, so concurrent first
 * checks from many machines bind exactly `max_fingerprints` of them and no other is counted.
 */
const BINDING = {
  known: {
    update: '',
    condition: 'attribute_not_exists(max_fingerprints) OR attribute_type(max_fingerprints, :nullType) OR attribute_exists(fingerprints.#fp)',
  },
  bind: { update: ', fingerprints.#fp = :now', condition: 'attribute_not_exists(fingerprints.#fp) AND size(fingerprints) < max_fingerprints' },
} as const;
type Binding = (typeof BINDING)[keyof typeof BINDING];

/** Keys whose open window a store remembers: enough for a container's busy keys, and a few hundred KB at most. */
const WINDOWS_REMEMBERED = 10_000;

/**
 * The check as conditional writes on the key item, which also holds the key's current one-minute window of checks
 * (`checkWindow`, `checkCount`). One write opens the window and counts the use, another counts within the open
 * window; each also assumes whether the asking machine is to be bound. A failed condition is followed by a
 * consistent read of the attributes the writes test (the item as it is then, which is as good a reason: every write
 * is conditional again): when it shows that the write assumed wrong (the window's state, the machine's binding), the other write
 * goes; otherwise the key's own state or its window's count refused the use, and the store says so with that state
 * (checkKey decides what it means). Which write goes first is this container's memory of the key's window, so a
 * check costs one write unless the key was last checked on another container this minute. The memory only orders
 * the writes: both are conditional on the key's state, so it can never admit a key.
 */
export class DynamoKeyCheckStore implements KeyCheckStore {
  private readonly watermarks = new Map<string, string>();
  private readonly openWindows = new Map<string, number>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  async checkAndCount(check: KeyCheck): Promise<CheckWrite> {
    const { keyId, fingerprint, now, perKeyPerMinute } = check;
    const window = rateWindowAt(now);
    const open: CountingWrite = {
      update: 'SET current_uses = current_uses + :one, last_check_at = :now, lastCheck = :report, checkWindow = :window, checkCount = :one',
      // A window from another container's clock a little ahead counts as this one: the `within` write takes it.
      condition: 'attribute_not_exists(checkWindow) OR checkWindow < :window',
      values: { ':window': window.start },
    };
    const within: CountingWrite = {
      update: 'SET current_uses = current_uses + :one, last_check_at = :now, lastCheck = :report, checkCount = checkCount + :one',
      condition: 'checkWindow >= :window AND checkCount < :limit',
      values: { ':window': window.start, ':limit': perKeyPerMinute },
    };
    const writes = this.openWindows.get(keyId) === window.start ? [within, open] : [open, within];
    // Most checks come from an unbound key or a machine already bound; the failed write's item says otherwise.
    let binding: Binding = BINDING.known;
    let turn = 0;
    for (let attempt = 1; attempt <= CHECK_WRITES; attempt++) {
      const write = writes[turn % writes.length] as CountingWrite;
      const result = await this.count(check, write, binding);
      if (result.counted) {
        this.remember(keyId, window.start);
        return { outcome: 'counted', keyId, key: result.key };
      }
      const windowOpen = result.window !== undefined && result.window >= window.start;
      const notCounted = (): CheckWrite => ({ outcome: 'not_counted', keyId, key: result.key, checksThisWindow: windowOpen ? result.checks : 0 });
      // No item, or the rule refuses the key as the item was: no other form of the write can count it.
      if (!result.key || !check.mayRun(result.key)) return notCounted();
      const wanted = needsBinding(result.key, fingerprint) ? BINDING.bind : BINDING.known;
      // The machine's binding was not what this write assumed (or another check just bound it): the same write again.
      if (wanted !== binding) {
        // A machine is bound only when the project has not blacklisted it (blacklist-store.ts machineBinding).
        const listed = wanted === BINDING.bind ? await machineBinding(this.db, this.tableName, check) : undefined;
        if (listed !== undefined) return { outcome: 'machine_blacklisted', keyId, reason: listed };
        binding = wanted;
        continue;
      }
      // `open` met this minute's window, or `within` met none: the other write's turn.
      if ((write === open) === windowOpen) {
        turn++;
        continue;
      }
      // The write's own assumptions held, so the key's window was full.
      if (windowOpen) this.remember(keyId, window.start);
      return notCounted();
    }
    throw new Error(`Key check of ${keyId} did not settle in ${CHECK_WRITES} writes`);
  }

  /** Strongly consistent, so a revoke that answered 200 is seen: a fetch with nothing to serve still refuses a revoked key. */
  async peek(keyId: string): Promise<KeyState | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true }));
    return Item && toKeyState(Item);
  }

  /**
   * Read apart from the counting write, which names only what the check writes or tests: the loader's grant leaves
   * the watermark out of the attributes it may name, so an update can never change the leak-tracing mark.
   */
  async watermarkOf(keyId: string): Promise<string | undefined> {
    const known = this.watermarks.get(keyId);
    if (known !== undefined) return known;
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true, ProjectionExpression: 'watermark' }),
    );
    if (typeof Item?.watermark !== 'string') return undefined;
    this.watermarks.set(keyId, Item.watermark);
    if (this.watermarks.size > WATERMARKS_REMEMBERED) this.watermarks.delete(this.watermarks.keys().next().value as string);
    return Item.watermark;
  }

  private remember(keyId: string, windowStart: number): void {
    this.openWindows.delete(keyId);
    this.openWindows.set(keyId, windowStart);
    // A Map iterates in insertion order: the first entry is the key remembered longest ago.
    if (this.openWindows.size > WINDOWS_REMEMBERED) this.openWindows.delete(this.openWindows.keys().next().value as string);
  }

  /** One conditional write that counts a use; what the check answers with after it, or the key's state once the condition failed. */
  private async count(
    check: KeyCheck,
    write: CountingWrite,
    binding: Binding,
  ): Promise<{ counted: true; key: CountedKey } | { counted: false; key: KeyState | undefined; window: number | undefined; checks: number }> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf.key(check.keyId),
          UpdateExpression: `${write.update}${binding.update}${COUNTED_RETURNS}`,
          ConditionExpression: `${MAY_RUN} AND (${write.condition}) AND (${binding.condition})`,
          ExpressionAttributeNames: { '#fp': fingerprintAttribute(check.fingerprint) },
          ExpressionAttributeValues: {
            ':hash': check.keyHash,
            ':project': check.projectId,
            ':zero': 0,
            ':now': check.now,
            ':nullType': 'NULL',
            ':one': 1,
            ':report': lastCheckOf(check),
            ...write.values,
          },
          ReturnValues: KEY_CHECK_RETURN_VALUES[0],
        }),
      );
      return { counted: true, key: toCountedKey(Attributes ?? {}) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The item that failed the condition, read back naming only the attributes the check writes or tests (which
      // hold every reason it can fail), instead of ReturnValuesOnConditionCheckFailure's whole item.
      const { Item: old } = await this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: keyOf.key(check.keyId),
          ConsistentRead: true,
          ProjectionExpression: KEY_CHECK_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(KEY_CHECK_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
        }),
      );
      return {
        counted: false,
        key: old && toKeyState(old),
        window: typeof old?.checkWindow === 'number' ? old.checkWindow : undefined,
        checks: Number(old?.checkCount ?? 0),
      };
    }
  }
}

/**
 * The `lastCheck` map a counted write leaves on the key item: the check's telemetry, which the table's stream hands
 * to ingest (lambdas/adapters/check-stream.ts reads it back). A few hundred bytes, so the item stays within 1 WCU.
 */
export function lastCheckOf({ report, now }: Pick<KeyCheck, 'report' | 'now'>): LastCheck {
  return {
    executor: report.executor,
    fingerprint: report.fingerprint,
    at: now,
    ...(report.script_hash ? { scriptHash: report.script_hash } : {}),
    ...(report.version_id ? { versionId: report.version_id } : {}),
    // About 70 bytes more: the stub's figures, read on the stream (the connection's reading is made there, not kept).
    ...(report.timing ? { timing: report.timing } : {}),
  };
}

export interface LastCheck {
  executor: string;
  fingerprint: string;
  at: number;
  scriptHash?: string;
  versionId?: string;
  timing?: CheckTiming;
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
    maxFingerprints: typeof item.max_fingerprints === 'number' ? item.max_fingerprints : null,
    fingerprints: boundFingerprints(item).map(({ fingerprint }) => fingerprint),
    watermark: String(item.watermark ?? ''),
    ban: banOf(item),
  };
}

function toCountedKey(item: Item): CountedKey {
  return {
    expiresAt: Number(item.expires_at),
    maxUses: typeof item.max_uses === 'number' ? item.max_uses : null,
    currentUses: Number(item.current_uses ?? 0),
  };
}
