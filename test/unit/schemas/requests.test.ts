import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import { KEYS_PAGE, ListKeysQuery, MAX_ID_LENGTH, NoQuery, RevokeBulkBody, RevokeKeyBody, RollbackBody } from '#schemas/requests';

/** The first message, as the handler reports it. */
function firstError(schema: z.ZodMiniType, input: unknown): string | undefined {
  const result = schema.safeParse(input);
  return result.success ? undefined : result.error.issues[0]?.message;
}

describe('ListKeysQuery (spec §4.1, §8)', () => {
  it('defaults limit to 50 and offset to 0', () => {
    expect(ListKeysQuery.parse({})).toEqual({ limit: 50, offset: 0 });
    expect(KEYS_PAGE).toMatchObject({ defaultLimit: 50, maxLimit: 100, defaultOffset: 0 });
  });

  it('takes whole numbers given as query text', () => {
    expect(ListKeysQuery.parse({ limit: '1', offset: '0' })).toEqual({ limit: 1, offset: 0 });
    expect(ListKeysQuery.parse({ limit: '100', offset: '250' })).toEqual({ limit: 100, offset: 250 });
    expect(ListKeysQuery.parse({ offset: '999999999999999' })).toEqual({ limit: 50, offset: 999_999_999_999_999 });
  });

  it.each(['101', '1000', '0', '-1', '1.5', '1e2', '', ' 5', '5 ', '0x10', 'ten', '+5', '99999999999999999999'])(
    'refuses limit=%j with a message naming the range 1..100',
    (limit) => {
      expect(firstError(ListKeysQuery, { limit })).toBe('limit must be a whole number between 1 and 100');
    },
  );

  it.each(['-1', '-0', '1.0', '1e2', '', 'abc', '1000000000000000', '99999999999999999999'])('refuses offset=%j', (offset) => {
    expect(firstError(ListKeysQuery, { offset })).toBe('offset must be a whole number between 0 and 999999999999999');
  });

  it('refuses an unknown query parameter by name, listing the allowed ones', () => {
    expect(firstError(ListKeysQuery, { limit: '5', page: '2' })).toBe('Unknown query parameter "page"; allowed: limit, offset, watermark');
    expect(firstError(ListKeysQuery, { page: '2', cursor: 'x' })).toBe('Unknown query parameters "page", "cursor"; allowed: limit, offset, watermark');
  });
});

describe('NoQuery (endpoints without query parameters)', () => {
  it('takes an empty query and refuses any parameter by name', () => {
    expect(NoQuery.parse({})).toEqual({});
    expect(firstError(NoQuery, { limit: '5' })).toBe('This endpoint takes no query parameters; remove "limit"');
  });
});

describe('RevokeKeyBody (spec §4.2)', () => {
  it('takes { key_id }', () => {
    expect(RevokeKeyBody.parse({ key_id: 'key_abc' })).toEqual({ key_id: 'key_abc' });
  });

  it('answers an empty object with "key_id is required"', () => {
    expect(firstError(RevokeKeyBody, {})).toBe('key_id is required');
  });

  it.each([
    [null, 'key_id must be a string'],
    [42, 'key_id must be a string'],
    [['key_1'], 'key_id must be a string'],
    ['', 'key_id must not be empty'],
    ['k'.repeat(MAX_ID_LENGTH + 1), `key_id must be at most ${MAX_ID_LENGTH} characters`],
  ])('refuses key_id=%j', (keyId, message) => {
    expect(firstError(RevokeKeyBody, { key_id: keyId })).toBe(message);
  });

  it('accepts a key_id of the longest allowed length', () => {
    expect(RevokeKeyBody.safeParse({ key_id: 'k'.repeat(MAX_ID_LENGTH) }).success).toBe(true);
  });

  it('refuses an unknown field by name', () => {
    expect(firstError(RevokeKeyBody, { key_id: 'key_1', force: true })).toBe('Unknown field "force"; allowed: key_id');
  });

  it.each([null, [], 'key_1', 42, true])('refuses a body that is not a JSON object (%j)', (body) => {
    expect(firstError(RevokeKeyBody, body)).toBe('Request body must be a JSON object');
  });
});

describe('RevokeBulkBody (spec §4.3)', () => {
  it('takes a watermark of 16 lowercase hex characters', () => {
    expect(RevokeBulkBody.parse({ watermark: '0123456789abcdef' })).toEqual({ watermark: '0123456789abcdef' });
  });

  it('requires the watermark', () => {
    expect(firstError(RevokeBulkBody, {})).toBe('watermark is required');
    expect(firstError(RevokeBulkBody, { watermark: 7 })).toBe('watermark must be a string');
  });

  it('gives the watermark rule its advice for a WM_ prefix, uppercase or a wrong length', () => {
    expect(firstError(RevokeBulkBody, { watermark: 'WM_0123456789abcdef' })).toContain('drop the prefix and send "0123456789abcdef"');
    expect(firstError(RevokeBulkBody, { watermark: '0123456789ABCDEF' })).toBe('watermark must be lowercase hex: send "0123456789abcdef"');
    expect(firstError(RevokeBulkBody, { watermark: 'abc' })).toContain('got 3 characters');
  });

  it('refuses unknown fields and bodies that are not objects', () => {
    expect(firstError(RevokeBulkBody, { watermark: '0123456789abcdef', all: true })).toBe('Unknown field "all"; allowed: watermark');
    expect(firstError(RevokeBulkBody, ['0123456789abcdef'])).toBe('Request body must be a JSON object');
  });
});

describe('RollbackBody (spec §4.5)', () => {
  it('takes { version_id } and requires it', () => {
    expect(RollbackBody.parse({ version_id: 'ver_1' })).toEqual({ version_id: 'ver_1' });
    expect(firstError(RollbackBody, {})).toBe('version_id is required');
    expect(firstError(RollbackBody, { version_id: 3 })).toBe('version_id must be a string');
  });

  it('refuses unknown fields by name', () => {
    expect(firstError(RollbackBody, { version_id: 'ver_1', version_number: 1 })).toBe('Unknown field "version_number"; allowed: version_id');
  });
});
