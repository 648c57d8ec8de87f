import { describe, expect, it } from 'vitest';
import { FIRST_PAGE, hasPrevious, nextPage, pageLabel, previousPage, queryKind, searchParams, withQuery, withStatus } from '../../../console/src/logic/paging';

describe('console key list paging', () => {
  it('asks the search route for the first page of every key when nothing is typed', () => {
    expect(searchParams(FIRST_PAGE)).toBe('status=all');
    expect(searchParams({ ...withQuery(FIRST_PAGE, '  alice  '), status: 'active' })).toBe('q=alice&status=active');
  });

  it('follows next_offset forward and goes back through the pages it came through', () => {
    const second = nextPage(FIRST_PAGE, { next_offset: 250, limit: 100 });
    expect(second.offset).toBe(250);
    expect(searchParams(second)).toBe('status=all&offset=250');
    const third = nextPage(second, { next_offset: 420, limit: 100 });
    expect(pageLabel(third, 100)).toBe('Page 3: 100 keys');
    expect(previousPage(third)).toEqual(second);
    expect(previousPage(previousPage(third))).toEqual(FIRST_PAGE);
    expect(hasPrevious(FIRST_PAGE)).toBe(false);
    expect(previousPage(FIRST_PAGE)).toBe(FIRST_PAGE);
  });

  it('steps a whole page when the route does not send next_offset', () => {
    expect(nextPage(FIRST_PAGE, { limit: 100 }).offset).toBe(100);
    expect(nextPage(FIRST_PAGE, {}).offset).toBe(100);
  });

  it('starts again at the first page when the query or the filter changes', () => {
    const deep = nextPage(nextPage(FIRST_PAGE, { next_offset: 100 }), { next_offset: 200 });
    expect(withQuery(deep, 'bob')).toEqual({ query: 'bob', status: 'all', offset: 0, previous: [] });
    expect(withStatus(deep, 'revoked')).toEqual({ query: '', status: 'revoked', offset: 0, previous: [] });
  });

  it('labels an empty first page and an empty later page differently', () => {
    expect(pageLabel(FIRST_PAGE, 0)).toBe('No keys');
    expect(pageLabel(nextPage(FIRST_PAGE, {}), 0)).toBe('Page 2: no more keys');
    expect(pageLabel(FIRST_PAGE, 1)).toBe('Page 1: 1 key');
  });

  it('tells what a query is taken for: watermark, Discord ID, key id or note words', () => {
    expect(queryKind('0badc0ffee15dead')).toBe('watermark');
    expect(queryKind('123456789012345678')).toBe('Discord ID');
    expect(queryKind('key_0a1b2c3d4e5f60718293')).toBe('key id');
    expect(queryKind('alice vip')).toBe('note');
    expect(queryKind('1234')).toBe('note');
  });
});
