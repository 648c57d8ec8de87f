/** The raw keys of one issue, as the `Download` button saves them: the only copy the publisher will ever get. */

export interface IssuedKey {
  id: string;
  key: string;
  watermark: string;
  expires_at: number;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  // A leading =, +, - or @ makes a spreadsheet run the cell as a formula: such a field is prefixed with a quote mark.
  const inert = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

function csvRows(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  return [header, ...rows]
    .map((row) => row.map(csvField).join(','))
    .join('\r\n')
    .concat('\r\n');
}

export function issuedKeysCsv(keys: readonly IssuedKey[]): string {
  return csvRows(
    ['id', 'key', 'watermark', 'expires_at'],
    keys.map((key) => [key.id, key.key, key.watermark, key.expires_at]),
  );
}

/** What `Copy` puts on the clipboard: one raw key a line, ready to paste into a shop or a message. */
export function issuedKeysText(keys: readonly IssuedKey[]): string {
  return keys.map((key) => key.key).join('\n');
}
