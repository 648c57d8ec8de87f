import { describe, expect, it } from 'vitest';
import { keyOf } from '#adapters/layout';
import { matchesFilter, readStreamRecord, STREAM_FILTER_PATTERN } from '#adapters/stream-events';
import { streamRecord } from '#test-support/event-fixtures';

const versionItem = {
  ...keyOf.version('prj_1', 'ver_1'),
  entity: 'VERSION',
  projectId: 'prj_1',
  id: 'ver_1',
  version_number: 3,
  uploaded_at: 1_700_000_000,
  size_bytes: 12_595,
  notes: '',
};

const eventItem = {
  ...keyOf.event('prj_1', 'new_executor', 'Wave'),
  entity: 'EVENT',
  projectId: 'prj_1',
  name: 'new_executor',
  occurredAt: 1_700_000_100,
  data: { executor: 'Wave', firstSeenAt: 1_700_000_100, previouslySeenAt: null },
  ttl: 1_800_000_000,
};

describe('STREAM_FILTER_PATTERN', () => {
  it('passes inserts of version and event items only', () => {
    expect(matchesFilter(streamRecord('INSERT', versionItem), STREAM_FILTER_PATTERN)).toBe(true);
    expect(matchesFilter(streamRecord('INSERT', eventItem), STREAM_FILTER_PATTERN)).toBe(true);
    expect(matchesFilter(streamRecord('MODIFY', versionItem), STREAM_FILTER_PATTERN)).toBe(false);
    expect(matchesFilter(streamRecord('REMOVE', eventItem), STREAM_FILTER_PATTERN)).toBe(false);
    for (const entity of ['WEBHOOK', 'PROJECT', 'KEY', 'RATE', 'DELIVERY']) {
      expect(matchesFilter(streamRecord('INSERT', { pk: 'x', sk: 'y', entity }), STREAM_FILTER_PATTERN)).toBe(false);
    }
  });
});

describe('readStreamRecord', () => {
  it('makes version_deployed from an inserted version item', () => {
    expect(readStreamRecord(streamRecord('INSERT', versionItem))).toEqual({
      kind: 'event',
      event: {
        name: 'version_deployed',
        projectId: 'prj_1',
        occurredAt: 1_700_000_000,
        data: { versionId: 'ver_1', versionNumber: 3, sizeBytes: 12_595, notes: '' },
      },
    });
  });

  it('makes the named event from an inserted event item', () => {
    expect(readStreamRecord(streamRecord('INSERT', eventItem))).toEqual({
      kind: 'event',
      event: { name: 'new_executor', projectId: 'prj_1', occurredAt: 1_700_000_100, data: eventItem.data },
    });
  });

  it('ignores records outside the filter', () => {
    expect(readStreamRecord(streamRecord('MODIFY', versionItem))).toEqual({ kind: 'ignored' });
  });

  it('calls an event item whose data does not fit its event invalid, naming the field', () => {
    const reading = readStreamRecord(streamRecord('INSERT', { ...eventItem, data: { executor: 7 } }));
    expect(reading.kind).toBe('invalid');
    expect(reading.kind === 'invalid' && reading.problem).toMatch(/data\.executor/);
  });
});
