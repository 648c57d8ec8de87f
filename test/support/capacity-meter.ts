import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * What DynamoDB says a client's requests cost: a middleware asks every request for `ReturnConsumedCapacity: TOTAL`
 * and adds up the `ConsumedCapacity` each answer carries, so a store is measured as it is, with no change to it.
 * DynamoDB Local reports the units the service would bill (item sizes rounded up to 1 KB for writes, 4 KB for reads).
 * Writes are also added up by the kind of item written, named by its sort key's first part (`SCRIPT_HASH`,
 * `EXECUTOR`...; `EVENT#<name>` for event items), so one detector's share of an ingest can be told apart.
 */
export interface CapacityMeter {
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Units and requests by command name, e.g. `UpdateItemCommand` → { write: 600, read: 0, requests: 600 }. */
  byCommand(): Record<string, Units>;
  /** Write units by kind of item written (single-item writes only). */
  writesByItem(): Record<string, number>;
  /** Write units spent on these kinds of item. */
  writesTo(kinds: readonly string[]): number;
  reset(): void;
}

interface Units {
  write: number;
  read: number;
  requests: number;
}

interface Consumed {
  WriteCapacityUnits?: number;
  ReadCapacityUnits?: number;
  CapacityUnits?: number;
}

const READS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand', 'TransactGetItemsCommand']);

/** `SCRIPT_HASH#scr#ver#abc` → `SCRIPT_HASH`; `EVENT#clone_detected#…` → `EVENT#clone_detected`. */
function itemKind(input: { Key?: { sk?: unknown }; Item?: { sk?: unknown } }): string | undefined {
  const raw = input.Key?.sk ?? input.Item?.sk;
  // Plain before the document client marshalls the input, `{ S: … }` after.
  const sk = typeof raw === 'object' && raw !== null && 'S' in raw ? raw.S : raw;
  if (typeof sk !== 'string') return undefined;
  const [first, second] = sk.split('#');
  return first === 'EVENT' ? `${first}#${second}` : first;
}

/** The items clone detection writes: each hash's record, the script's tally, clone_detected events. */
export const CLONE_DETECTION_ITEMS = ['SCRIPT_HASH', 'SCRIPT', 'EVENT#clone_detected'] as const;

export function meterCapacity(db: DynamoDBDocumentClient): CapacityMeter {
  const commands = new Map<string, Units>();
  const items = new Map<string, number>();
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const name = context.commandName ?? 'unknown';
      const units = commands.get(name) ?? { write: 0, read: 0, requests: 0 };
      commands.set(name, units);
      units.requests += 1;
      const addWrite = (amount: number) => {
        units.write += amount;
        const kind = itemKind(input);
        if (kind !== undefined) items.set(kind, (items.get(kind) ?? 0) + amount);
      };
      let result: Awaited<ReturnType<typeof next>>;
      try {
        result = await next(args);
      } catch (error) {
        // A failed condition still bills the write, but its error carries no ConsumedCapacity: 1 WCU, the least a write costs.
        if (error instanceof Error && error.name === 'ConditionalCheckFailedException') addWrite(1);
        throw error;
      }
      const consumed = (result.output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity;
      for (const part of [consumed ?? []].flat()) {
        // A single-item answer may give CapacityUnits only; which kind it was follows from the command.
        if (READS.has(name)) units.read += part.ReadCapacityUnits ?? part.CapacityUnits ?? 0;
        else addWrite(part.WriteCapacityUnits ?? part.CapacityUnits ?? 0);
      }
      return result;
    },
    { step: 'initialize', name: 'meterConsumedCapacity' },
  );
  const sum = (kind: 'write' | 'read') => [...commands.values()].reduce((total, units) => total + units[kind], 0);
  return {
    get writeUnits() {
      return sum('write');
    },
    get readUnits() {
      return sum('read');
    },
    byCommand: () => Object.fromEntries(commands),
    writesByItem: () => Object.fromEntries(items),
    writesTo: (kinds) => kinds.reduce((total, kind) => total + (items.get(kind) ?? 0), 0),
    reset: () => {
      commands.clear();
      items.clear();
    },
  };
}
