/**
 * An item's size as DynamoDB bills it (AWS's "Item sizes and formats"): each attribute's name in UTF-8 bytes plus its
 * value: a string its UTF-8 bytes, a number about one byte per two significant digits plus one, a boolean or null one
 * byte, a set its elements, a list or map 3 bytes plus a byte and the size of each element (and a map its keys).
 * DynamoDB Local reports every TransactWriteItems as 4 WCU whatever it writes, so the bench prices transactions by this.
 */
export function itemBytes(item: Record<string, unknown>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number')
    return (
      Math.ceil(
        String(Math.abs(value))
          .replace(/^0+|\.|e.*$/g, '')
          .replace(/0+$/, '').length / 2,
      ) + 1
    );
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Set) return [...value].reduce((sum: number, element) => sum + valueBytes(element), 0);
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, element) => sum + 1 + valueBytes(element), 0);
  if (typeof value === 'object') return 3 + Object.entries(value).reduce((sum, [key, element]) => sum + 1 + Buffer.byteLength(key) + valueBytes(element), 0);
  return 0;
}

/** Write units of one item written in a transaction: two per KB of the larger of its sizes before and after. */
export const transactionalWriteUnits = (bytes: number): number => 2 * Math.max(1, Math.ceil(bytes / 1024));
