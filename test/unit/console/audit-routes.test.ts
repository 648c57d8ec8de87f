import { describe, expect, it } from 'vitest';
import { auditRow } from '../../../console/src/logic/audit';
import { href, parseRoute } from '../../../console/src/logic/routes';

describe('console audit rows', () => {
  it('shows an entry as time, action, source, who and what, from the store camelCase fields', () => {
    expect(
      auditRow(
        {
          entryId: 'aud_1',
          at: 1_764_147_600,
          action: 'key.revoke_bulk',
          status: 'completed',
          source: 'console',
          tokenId: 'tok_9',
          requestId: 'r1',
          target: { watermark: '0badc0ffee15dead' },
          outcome: { revoked_count: 3 },
        },
        0,
      ),
    ).toEqual({
      id: 'aud_1',
      at: 1_764_147_600,
      action: 'key.revoke_bulk',
      source: 'console',
      who: 'token tok_9',
      what: 'watermark: 0badc0ffee15dead → revoked_count: 3',
    });
  });

  it('reads snake_case entries, names an unfinished status and a dashboard caller', () => {
    expect(
      auditRow(
        {
          entry_id: 'aud_2',
          at: 5,
          action: 'key.revoke_bulk',
          status: 'failed',
          source: 'dashboard',
          token_id: null,
          caller: 'local:alice',
          target: {},
          outcome: {},
        },
        1,
      ),
    ).toEqual({ id: 'aud_2', at: 5, action: 'key.revoke_bulk (failed)', source: 'dashboard', who: 'local:alice', what: '—' });
  });

  it('keeps going on an entry of an unexpected shape', () => {
    expect(auditRow({}, 7)).toEqual({ id: '7', at: null, action: '', source: '', who: '—', what: '—' });
  });
});

describe('console routes', () => {
  it('reads each page from the URL fragment and writes the same fragment back', () => {
    const cases = ['#/projects', '#/tokens', '#/projects/prj_1/keys', '#/projects/prj_1/versions', '#/projects/prj_1/keys/key_2', '#/projects/prj_1/loader'];
    for (const hash of cases) expect(href(parseRoute(hash))).toBe(hash);
  });

  it('opens a project on its keys and an empty fragment on the projects', () => {
    expect(parseRoute('')).toEqual({ page: 'projects' });
    expect(parseRoute('#/projects/prj_1')).toEqual({ page: 'keys', projectId: 'prj_1' });
  });

  it('says not found for a page that does not exist', () => {
    expect(parseRoute('#/projects/prj_1/nothing')).toEqual({ page: 'not-found', path: '/projects/prj_1/nothing' });
    expect(parseRoute('#/elsewhere')).toEqual({ page: 'not-found', path: '/elsewhere' });
  });
});
