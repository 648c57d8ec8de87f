/** The keys page's list state: what to ask the search route, and what Next and Previous lead to. */

/** Keys a page (DESIGN.md "Publisher console": 100 keys a page). */
export const PAGE_SIZE = 100;

export const STATUS_FILTERS = ['all', 'active', 'revoked', 'expired'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/**
 * Where the list is: `offset` is the position the search route was asked from; `previous` the offsets of the pages
 * before it, newest last. With a status filter the route skips keys that do not match, so a page's next offset is
 * what the route answers (`next_offset`), not offset + 100, and Previous goes back through the pages seen.
 */
export interface KeyListState {
  query: string;
  status: StatusFilter;
  offset: number;
  previous: readonly number[];
}

export const FIRST_PAGE: KeyListState = { query: '', status: 'all', offset: 0, previous: [] };

/** The search route's query string; a blank query lists instead of searching. */
export function searchParams(state: KeyListState): string {
  const params = new URLSearchParams();
  const query = state.query.trim();
  if (query !== '') params.set('q', query);
  params.set('status', state.status);
  if (state.offset > 0) params.set('offset', String(state.offset));
  return params.toString();
}

/** A new query or filter starts again at the first page. */
export function withQuery(state: KeyListState, query: string): KeyListState {
  return { ...state, query, offset: 0, previous: [] };
}

export function withStatus(state: KeyListState, status: StatusFilter): KeyListState {
  return { ...state, status, offset: 0, previous: [] };
}

/** The page after this one, from the route's `next_offset` (or offset + limit from a route that does not send it). */
export function nextPage(state: KeyListState, answer: { next_offset?: number | null; limit?: number }): KeyListState {
  const next = answer.next_offset ?? state.offset + (answer.limit ?? PAGE_SIZE);
  return { ...state, offset: next, previous: [...state.previous, state.offset] };
}

export function previousPage(state: KeyListState): KeyListState {
  if (state.previous.length === 0) return state;
  return { ...state, offset: state.previous[state.previous.length - 1] ?? 0, previous: state.previous.slice(0, -1) };
}

export function hasPrevious(state: KeyListState): boolean {
  return state.previous.length > 0;
}

/** `Page 2: 100 keys`, or `No keys` for an empty first page. */
export function pageLabel(state: KeyListState, shown: number): string {
  const page = state.previous.length + 1;
  if (shown === 0) return page === 1 ? 'No keys' : `Page ${page}: no more keys`;
  return `Page ${page}: ${shown} key${shown === 1 ? '' : 's'}`;
}

export type QueryKind = 'key id' | 'watermark' | 'Discord ID' | 'note';

/** What the search route takes a query for (SHARED-CONTRACTS §2), to say so beside the results. */
export function queryKind(query: string): QueryKind {
  const text = query.trim();
  if (/^[0-9a-f]{16}$/i.test(text)) return 'watermark';
  if (/^\d{17,20}$/.test(text)) return 'Discord ID';
  if (/^key_[A-Za-z0-9]+$/.test(text)) return 'key id';
  return 'note';
}
