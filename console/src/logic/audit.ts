/**
 * An audit entry as the Audit page shows it: time, action, source, who, what. The route answers the server's
 * entries; fields are read by either spelling (snake_case or the store's camelCase), and anything else is left out.
 */
export interface AuditRow {
  id: string;
  at: number | null;
  action: string;
  source: string;
  who: string;
  what: string;
}

type Entry = Record<string, unknown>;

function field(entry: Entry, ...names: string[]): unknown {
  for (const name of names) if (entry[name] !== undefined && entry[name] !== null) return entry[name];
  return undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

function details(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  return Object.entries(value as Entry)
    .filter(([, item]) => item !== null && item !== undefined)
    .map(([name, item]) => `${name}: ${typeof item === 'object' ? JSON.stringify(item) : text(item)}`)
    .join(', ');
}

export function auditRow(entry: Entry, index: number): AuditRow {
  const at = field(entry, 'at', 'created_at');
  const tokenId = text(field(entry, 'token_id', 'tokenId'));
  const caller = text(field(entry, 'caller', 'discord_user_id', 'discordUserId'));
  const target = details(field(entry, 'target'));
  const outcome = details(field(entry, 'outcome'));
  const status = text(field(entry, 'status'));
  return {
    id: text(field(entry, 'entry_id', 'entryId')) || String(index),
    at: typeof at === 'number' ? at : null,
    action: text(field(entry, 'action')) + (status && status !== 'completed' ? ` (${status})` : ''),
    source: text(field(entry, 'source')),
    who: [tokenId && `token ${tokenId}`, caller].filter((part) => part !== '').join(', ') || '—',
    what: [target, outcome && `→ ${outcome}`].filter((part) => part !== '').join(' ') || '—',
  };
}
