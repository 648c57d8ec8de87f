import { describe, expect, it } from 'vitest';
import { parseTelemetryBatch } from '#domain/analytics/telemetry';
import { addDays, dayStart, hourStart, utcDate, utcHour } from '#domain/time';
import { IngestRequestSchema, MAX_BATCH_RECORDS, MAX_CLOCK_SKEW_SECONDS, MAX_RECORD_AGE_SECONDS } from '#schemas/telemetry';

const NOW = 1_700_000_000;
const FINGERPRINT = 'a'.repeat(64);

const execution = (fields: Record<string, unknown> = {}) => ({ kind: 'execution', projectId: 'prj_a', executor: 'Synapse X', at: NOW, ...fields });
const validation = (fields: Record<string, unknown> = {}) => ({
  kind: 'validation',
  projectId: 'prj_a',
  keyId: 'key_1',
  result: 'ok',
  executor: 'Synapse X',
  fingerprint: FINGERPRINT,
  at: NOW,
  ...fields,
});

describe('parseTelemetryBatch', () => {
  it('accepts an execution with only its required fields and a validation', () => {
    const batch = parseTelemetryBatch([execution(), validation()], NOW);
    expect(batch.rejections).toEqual([]);
    expect(batch.executions).toEqual([{ kind: 'execution', projectId: 'prj_a', executor: 'Synapse X', at: NOW, index: 0 }]);
    expect(batch.validations).toHaveLength(1);
  });

  it('normalizes hashes to lowercase and trims executor names', () => {
    const batch = parseTelemetryBatch([execution({ scriptHash: 'ABCDEF0123', executor: '  KRNL ' }), validation({ fingerprint: 'B'.repeat(32) })], NOW);
    expect(batch.executions[0]).toMatchObject({ scriptHash: 'abcdef0123', executor: 'KRNL' });
    expect(batch.validations[0]?.fingerprint).toBe('b'.repeat(32));
  });

  it('rejects bad records with their index and what is wrong, and keeps the good ones', () => {
    const batch = parseTelemetryBatch(
      [
        execution(),
        execution({ executor: undefined }),
        validation({ result: 'stolen' }),
        validation({ fingerprint: 'raw-client-id' }),
        { kind: 'crash' },
        'not a record',
        execution({ projectId: 'PROJECT#x' }),
        execution({ at: 1.5 }),
        execution({ executor: 'bad\u0007name' }),
      ],
      NOW,
    );
    expect(batch.executions).toHaveLength(1);
    expect(batch.rejections).toEqual([
      { index: 1, reason: 'executor is required' },
      { index: 2, reason: 'result must be one of ok, revoked, banned, expired, hwid_locked, over_limit, unknown' },
      { index: 3, reason: 'fingerprint must be a hashed client fingerprint: 16-128 hex characters' },
      { index: 4, reason: 'kind must be one of execution, validation' },
      { index: 5, reason: 'kind must be one of execution, validation' },
      { index: 6, reason: 'projectId must be 1-64 characters of A-Z, a-z, 0-9, _ or -' },
      { index: 7, reason: 'at must be a whole number of Unix seconds' },
      { index: 8, reason: 'executor must not contain control or bidirectional-override characters' },
    ]);
  });

  it(`accepts a record dated up to ${MAX_CLOCK_SKEW_SECONDS} s ahead and rejects one a second further`, () => {
    const batch = parseTelemetryBatch([execution({ at: NOW + MAX_CLOCK_SKEW_SECONDS }), execution({ at: NOW + MAX_CLOCK_SKEW_SECONDS + 1 })], NOW);
    expect(batch.executions).toHaveLength(1);
    expect(batch.rejections).toEqual([{ index: 1, reason: `at (${NOW + 301}) is more than 300 s in the future` }]);
  });
});

describe('the accepted time window', () => {
  it(`accepts a record dated up to ${MAX_RECORD_AGE_SECONDS / 86_400} days back and rejects one a second older`, () => {
    const batch = parseTelemetryBatch([validation({ at: NOW - MAX_RECORD_AGE_SECONDS }), validation({ at: NOW - MAX_RECORD_AGE_SECONDS - 1 })], NOW);
    expect(batch.validations).toHaveLength(1);
    expect(batch.rejections).toEqual([{ index: 1, reason: `at (${NOW - MAX_RECORD_AGE_SECONDS - 1}) is more than 8 days in the past` }]);
  });

  it("covers every detector's window: new_executor's 7-day absence and execution_drop's two days", () => {
    expect(MAX_RECORD_AGE_SECONDS).toBeGreaterThan(7 * 86_400);
    expect(MAX_CLOCK_SKEW_SECONDS).toBeLessThanOrEqual(300);
  });
});

describe('IngestRequestSchema', () => {
  it(`takes up to ${MAX_BATCH_RECORDS} records and refuses more`, () => {
    expect(IngestRequestSchema.safeParse({ records: new Array(MAX_BATCH_RECORDS).fill(0) }).success).toBe(true);
    const tooMany = IngestRequestSchema.safeParse({ records: new Array(MAX_BATCH_RECORDS + 1).fill(0) });
    expect(tooMany.error?.issues[0]?.message).toBe(`a batch holds at most ${MAX_BATCH_RECORDS} records`);
  });

  it('refuses an envelope without a records array', () => {
    expect(IngestRequestSchema.safeParse({ records: 'x' }).error?.issues[0]?.message).toBe('records must be an array');
  });
});

describe('UTC windows', () => {
  it('places a timestamp in its UTC day and hour', () => {
    expect(utcDate(NOW)).toBe('2023-11-14');
    expect(hourStart(NOW)).toBe(1_699_999_200);
    expect(utcHour(NOW)).toBe('2023-11-14T22');
  });

  it('steps days across month and leap-year ends', () => {
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2023-12-31', 1)).toBe('2024-01-01');
  });

  it('accepts only real YYYY-MM-DD days', () => {
    expect(dayStart('2023-11-14')).toBe(1_699_920_000);
    expect(dayStart('2023-02-29')).toBeUndefined();
    expect(dayStart('2023-11-14T00')).toBeUndefined();
  });
});
