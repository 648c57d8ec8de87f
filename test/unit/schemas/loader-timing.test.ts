import { describe, expect, it } from 'vitest';
import { CONNECTION_RULE, checkTimingOf, previousConnection } from '#domain/loader-timing';
import { LoaderCheckRequest } from '#schemas/loader';
import { ExecutionRecordSchema } from '#schemas/telemetry';

/**
 * The stub's optional `timing` (issue 32, docs/loader.md "Does the executor reuse a connection?"): read when it is
 * well formed, dropped (never a 400) when it is not, and the rule that reads the previous request's connection.
 */

const BODY = { project_id: 'prj_1', key: 'sdk_x', fingerprint: 'a'.repeat(64), executor: 'Wave' };

describe('LoaderCheckRequest: timing', () => {
  it('is optional: a body without it (older stubs, the validate loader) reads as before', () => {
    expect(LoaderCheckRequest.parse(BODY)).toEqual(BODY);
  });

  it('keeps a well-formed one, nulls included (a first run has no figures)', () => {
    const timing = { run_in_session: 3, previous_request_ms: 140, first_request_ms: null };
    expect(LoaderCheckRequest.parse({ ...BODY, timing }).timing).toEqual(timing);
    expect(LoaderCheckRequest.parse({ ...BODY, timing: { run_in_session: 1 } }).timing).toEqual({ run_in_session: 1 });
  });

  it.each([
    ['not an object', 'fast'],
    ['null', null],
    ['an array', [1, 2]],
    ['no run_in_session', { previous_request_ms: 140 }],
    ['run_in_session 0', { run_in_session: 0 }],
    ['a fraction of a run', { run_in_session: 1.5 }],
    ['a negative figure', { run_in_session: 2, previous_request_ms: -1 }],
    ['a figure past five minutes', { run_in_session: 2, previous_request_ms: 300_001 }],
    ['a figure as a string', { run_in_session: 2, first_request_ms: '420' }],
  ])('drops one that is %s, and reads the rest of the body as it is: telemetry never refuses a run', (_name, timing) => {
    const parsed = LoaderCheckRequest.safeParse({ ...BODY, timing });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.timing).toBeUndefined();
    expect(parsed.data).toMatchObject(BODY);
  });

  it('still refuses the rest of a malformed body, naming the field', () => {
    const parsed = LoaderCheckRequest.safeParse({ ...BODY, fingerprint: 'x', timing: { run_in_session: 1 } });
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual([
      "fingerprint must be 64 lowercase hex characters: the SHA-256 of the machine's id, never the id itself",
    ]);
  });
});

describe('previousConnection: the rule', () => {
  it.each([
    // Direct (TLS in the Region), R = 100 ms, server 15 ms: 115 against 315 is 0.37.
    [{ previousRequestMs: 115, firstRequestMs: 315 }, 'reused'],
    [{ previousRequestMs: 60, firstRequestMs: 100 }, 'reused'],
    // Both fresh, a little noise either way.
    [{ previousRequestMs: 310, firstRequestMs: 315 }, 'new'],
    [{ previousRequestMs: 400, firstRequestMs: 315 }, 'new'],
    // Behind the edge, a reused connection saves only the edge's handshakes: 152 against 182 (São Paulo) is 0.84.
    [{ previousRequestMs: 152, firstRequestMs: 182 }, 'unknown'],
    [{ previousRequestMs: 61, firstRequestMs: 100 }, 'unknown'],
    // No figure to compare with, or a first too fast to judge.
    [{ previousRequestMs: 140 }, 'unknown'],
    [{ firstRequestMs: 420 }, 'unknown'],
    [{ previousRequestMs: 5, firstRequestMs: 19 }, 'unknown'],
  ] as const)('reads %o as %s', (figures, reading) => {
    expect(previousConnection(figures)).toBe(reading);
  });

  it('has its bounds in order, with a gray zone between them', () => {
    expect(CONNECTION_RULE.reusedAtMost).toBeLessThan(CONNECTION_RULE.newAtLeast);
  });

  it("turns the request's names into the key item's, leaving out null figures", () => {
    expect(checkTimingOf({ run_in_session: 2, previous_request_ms: 140, first_request_ms: null })).toEqual({ runInSession: 2, previousRequestMs: 140 });
    expect(checkTimingOf(undefined)).toBeUndefined();
  });
});

describe('ExecutionRecordSchema: timing', () => {
  const record = { kind: 'execution', projectId: 'prj_1', keyId: 'key_1', executor: 'Wave', at: 1_767_225_600 } as const;

  it('accepts an execution with it and one without it', () => {
    const timing = { runInSession: 3, previousRequestMs: 140, firstRequestMs: 420, previousConnection: 'reused' } as const;
    expect(ExecutionRecordSchema.parse({ ...record, timing })).toEqual({ ...record, timing });
    expect(ExecutionRecordSchema.parse(record)).toEqual(record);
  });

  it('drops a malformed one and keeps the execution: ingest never loses a run to its timing', () => {
    const parsed = ExecutionRecordSchema.safeParse({ ...record, timing: { runInSession: 3, previousConnection: 'maybe' } });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.timing).toBeUndefined();
  });
});
