import {
  classifySearch,
  EXPORT_PAGE_KEYS,
  type KeyStatusFilter,
  keyStatus,
  MAX_LISTING_READ,
  MAX_SEARCH_CANDIDATES,
  mostSelectiveWord,
  noteMatches,
  SEARCH_PAGE,
  statusMatches,
} from '#domain/key-search';
import type { KeyDetail, Project } from '#domain/model';
import { revokeSelected } from '#domain/project-api';
import { ExportQuery, RevokeSelectedBody, SearchQuery } from '#schemas/console';
import { type ConsoleDeps, defineConsoleRoute, json, read, write } from '../console-route';

/** The Keys page's own routes: search and listing, revoking the selected keys, the CSV export. */

type SearchedKey = KeyDetail & { status: ReturnType<typeof keyStatus> };

export const searchKeys = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/keys/search',
  need: read('searching keys', 'list-keys'),
  query: SearchQuery,
  run: async ({ project, query, stores, now }) => {
    const status = query.status as KeyStatusFilter;
    const search = classifySearch(query.q ?? '');
    const withStatus = (key: KeyDetail): SearchedKey => ({ ...key, status: keyStatus(key, now) });
    if (!search) return json(await listing(stores, project, query.offset, status, withStatus));

    let ids: string[];
    if (search.kind === 'key_id') ids = [search.keyId];
    else if (search.kind === 'watermark') ids = await stores.reads.keyIdsWithWatermark(project.id, search.watermark, MAX_SEARCH_CANDIDATES);
    else if (search.kind === 'discord_id') ids = (await stores.keys.keyIdsByDiscordId(project.id, search.discordId)).slice(0, MAX_SEARCH_CANDIDATES);
    else ids = await stores.reads.keyIdsWithNoteWord(project.id, mostSelectiveWord(search.words), MAX_SEARCH_CANDIDATES);

    const found = (await stores.keys.keyDetails(project.id, ids))
      .map(withStatus)
      .filter((key) => statusMatches(status, key.status) && (search.kind !== 'note' || noteMatches(key.note, search.words)));
    const page = found.slice(query.offset, query.offset + SEARCH_PAGE);
    const hasMore = query.offset + SEARCH_PAGE < found.length;
    return json({ keys: page, offset: query.offset, next_offset: query.offset + page.length, limit: SEARCH_PAGE, has_more: hasMore });
  },
});

/**
 * The project's keys in issue order from position `offset`: 100 a page, or with a status filter the next 100 that
 * match among at most MAX_LISTING_READ keys read; `next_offset` is where the next page starts reading.
 */
async function listing(stores: ConsoleDeps['stores'], project: Project, offset: number, status: KeyStatusFilter, withStatus: (key: KeyDetail) => SearchedKey) {
  const keys: SearchedKey[] = [];
  let position = offset;
  let read = 0;
  while (keys.length < SEARCH_PAGE && read < MAX_LISTING_READ) {
    const entries = await stores.reads.keyIdsAfter(project.id, position, SEARCH_PAGE);
    if (entries.length === 0) break;
    const details = await stores.keys.keyDetails(
      project.id,
      entries.map((entry) => entry.keyId),
    );
    const seqOf = new Map(entries.map((entry) => [entry.keyId, entry.seq]));
    read += entries.length;
    for (const key of details) {
      const seq = seqOf.get(key.id) ?? position;
      if (keys.length === SEARCH_PAGE) break;
      position = seq;
      const shown = withStatus(key);
      if (statusMatches(status, shown.status)) keys.push(shown);
    }
    if (entries.length < SEARCH_PAGE) {
      position = Math.max(position, entries.at(-1)?.seq ?? position);
      break;
    }
  }
  return { keys, offset, next_offset: position, limit: SEARCH_PAGE, has_more: position < project.keyCount };
}

export const revokeSelectedKeys = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/keys/revoke-selected',
  need: write('revoking keys', 'revoke-key'),
  body: RevokeSelectedBody,
  run: async ({ project, body, now, trail, stores }) => json(await revokeSelected(stores.projects, project, body.key_ids, now, trail)),
});

const CSV_COLUMNS = [
  'id',
  'watermark',
  'status',
  'tier',
  'issued_at',
  'expires_at',
  'max_uses',
  'current_uses',
  'max_machines',
  'machines',
  'note',
  'discord_id',
];

/** A CSV field: quoted when it must be, and never read as a formula by a spreadsheet (a note is the buyer's text). */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Every key's metadata, in issue order (never a raw value: the table has none). */
/** The header that names where the next page of the export starts; absent on the last page. */
const EXPORT_NEXT_HEADER = 'X-Export-Next-After';

/**
 * Every key's metadata in issue order (never a raw value: the table has none), EXPORT_PAGE_KEYS a request: the
 * page of the keys after `after`, the header row on the first page only, and EXPORT_NEXT_HEADER while keys remain.
 */
export const exportCsv = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/keys/export.csv',
  need: read('exporting keys', 'list-keys'),
  query: ExportQuery,
  run: async ({ project, query, stores, now }) => {
    const lines = query.after === 0 ? [CSV_COLUMNS.join(',')] : [];
    let position = query.after;
    for (let counted = 0; counted < EXPORT_PAGE_KEYS; ) {
      const entries = await stores.reads.keyIdsAfter(project.id, position, 100);
      if (entries.length === 0) break;
      const details = await stores.keys.keyDetails(
        project.id,
        entries.map((entry) => entry.keyId),
      );
      for (const key of details) {
        const row = [
          key.id,
          key.watermark,
          keyStatus(key, now),
          key.tier,
          key.issued_at,
          key.expires_at,
          key.max_uses,
          key.current_uses,
          key.max_fingerprints,
          key.fingerprints.length,
          key.note,
          key.discord_id,
        ];
        lines.push(row.map(csvField).join(','));
      }
      counted += entries.length;
      position = entries.at(-1)?.seq ?? position;
      if (entries.length < 100) break;
    }
    return {
      status: 200,
      raw: lines.length === 0 ? '' : `${lines.join('\r\n')}\r\n`,
      headers: {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="keys-${project.id}.csv"`,
        ...(position < project.keyCount && position > query.after ? { [EXPORT_NEXT_HEADER]: String(position) } : {}),
      },
    };
  },
});
