import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { CHECK_STREAM_FILTER_PATTERN, readCheckRecord } from '#adapters/check-stream';
import { lastCheckOf } from '#adapters/key-check-store';
import { matchesFilter, STREAM_FILTER_PATTERN } from '#adapters/stream-events';
import { checkTelemetry } from '#domain/key-check';

const FP = 'f'.repeat(64);
const NOW = 1_767_225_600;
const keyItem = (fields: Record<string, unknown>) => ({ pk: 'KEY#key_1', sk: 'KEY', entity: 'KEY', id: 'key_1', projectId: 'prj_1', revoked: 0, ...fields });
const image = (item: Record<string, unknown>) => marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>;
const modify = (before: Record<string, unknown>, after: Record<string, unknown>): DynamoDBRecord => ({
  eventID: 'e1',
  eventName: 'MODIFY',
  dynamodb: { OldImage: image(keyItem(before)), NewImage: image(keyItem(after)), SequenceNumber: '1' },
});
const counted = () =>
  modify(
    { current_uses: 3 },
    {
      current_uses: 4,
      lastCheck: lastCheckOf({
        now: NOW,
        report: { project_id: 'prj_1', executor: 'Wave', fingerprint: FP, script_hash: 'a'.repeat(64), version_id: 'ver_1' },
      }),
    },
  );

describe("counted checks' telemetry off the table's stream", () => {
  it('makes of a counted check the validation and the execution the check would have reported', () => {
    const reading = readCheckRecord(counted());
    const report = { project_id: 'prj_1', executor: 'Wave', fingerprint: FP, script_hash: 'a'.repeat(64), version_id: 'ver_1' };
    expect(reading).toEqual({ kind: 'counted', keyId: 'key_1', at: NOW, report });
    // The store reads what the check wrote; the domain's checkTelemetry makes the records of it (as ingest-stream does).
    expect(checkTelemetry(report, 'key_1', 'KEY_VALID', NOW)).toEqual([
      { kind: 'validation', projectId: 'prj_1', keyId: 'key_1', result: 'ok', executor: 'Wave', fingerprint: FP, at: NOW },
      { kind: 'execution', projectId: 'prj_1', keyId: 'key_1', executor: 'Wave', scriptHash: 'a'.repeat(64), versionId: 'ver_1', at: NOW },
    ]);
  });

  it("carries the stub's timing to the execution with the reading of the previous request's connection; a garbled one is left out, not the records", () => {
    const lastCheck = lastCheckOf({
      now: NOW,
      report: { project_id: 'prj_1', executor: 'Wave', fingerprint: FP, timing: { runInSession: 4, previousRequestMs: 300, firstRequestMs: 310 } },
    });
    const reading = readCheckRecord(modify({ current_uses: 3 }, { current_uses: 4, lastCheck }));
    expect(reading).toMatchObject({ kind: 'counted', report: { timing: { runInSession: 4, previousRequestMs: 300, firstRequestMs: 310 } } });
    expect(reading.kind === 'counted' && checkTelemetry(reading.report, reading.keyId, 'KEY_VALID', reading.at)).toMatchObject([
      { kind: 'validation' },
      { kind: 'execution', timing: { runInSession: 4, previousRequestMs: 300, firstRequestMs: 310, previousConnection: 'new' } },
    ]);
    const garbled = { ...lastCheck, timing: { runInSession: 'four' } };
    const garbledReading = readCheckRecord(modify({ current_uses: 3 }, { current_uses: 4, lastCheck: garbled }));
    expect(garbledReading).toMatchObject({ kind: 'counted' });
    expect(garbledReading.kind === 'counted' && garbledReading.report).not.toHaveProperty('timing');
  });

  it('ignores a change of the key item that counted no use (a revoke, an HWID reset), though it carries the last check', () => {
    const last = lastCheckOf({ now: NOW, report: { project_id: 'prj_1', executor: 'Wave', fingerprint: FP } });
    expect(readCheckRecord(modify({ current_uses: 4, lastCheck: last }, { current_uses: 4, lastCheck: last, revoked: 1 }))).toEqual({ kind: 'ignored' });
  });

  it('calls a counted write without lastCheck invalid, so it is logged and counted rather than dropped unseen', () => {
    expect(readCheckRecord(modify({ current_uses: 3 }, { current_uses: 4 }))).toMatchObject({ kind: 'invalid' });
  });

  it("matches only the ingest consumer's filter: the webhook fan-out's never sees a check, the ingest never sees an event", () => {
    expect(matchesFilter(counted(), CHECK_STREAM_FILTER_PATTERN)).toBe(true);
    expect(matchesFilter(counted(), STREAM_FILTER_PATTERN)).toBe(false);
    const eventInsert = { eventName: 'INSERT', dynamodb: { NewImage: image({ pk: 'EVENTS#prj_1', sk: 'EVENT#x', entity: 'EVENT' }) } };
    expect(matchesFilter(eventInsert, CHECK_STREAM_FILTER_PATTERN)).toBe(false);
    expect(matchesFilter(eventInsert, STREAM_FILTER_PATTERN)).toBe(true);
  });
});
