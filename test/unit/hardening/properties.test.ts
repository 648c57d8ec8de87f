import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { RateLimited } from '#domain/errors';
import { consumeRateLimit, RATE_LIMIT, rateWindowAt } from '#domain/rate-limit';
import { errorHeadersOf } from '#http/error-statuses';
import { watermarkProblem } from '#schemas/formats';
import { KEYS_PAGE, ListKeysQuery, RevokeBulkBody } from '#schemas/requests';
import { invoke, memoryApi, PROJECT_ID } from '#test-support/api-harness';
import { apiEvent } from '#test-support/fixtures';
import { MemoryStores } from '#test-support/memory-stores';
import { HARDENING_RUNS, PROPERTY_RUNS, reportFigure, timeoutFor } from '#test-support/runs';

/**
 * The rules that take free-form input, checked against arbitrary input rather than chosen examples: each
 * accepts exactly what its rule says, and what it refuses gets a message a person can act on.
 */

/** Strings of every kind, weighted toward the near misses a person or a script would actually send. */
function watermarkCandidates(): fc.Arbitrary<string> {
  const hex = fc.constantFrom(...'0123456789abcdef');
  return fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: hex, minLength: 16, maxLength: 16 }),
    fc.string({ unit: hex, minLength: 14, maxLength: 18 }),
    fc.stringMatching(/^[0-9a-fA-F]{16}$/),
    fc.stringMatching(/^(WM_|wm_|Wm_)[0-9a-fA-F]{15,17}$/),
    fc
      .string({ unit: hex, minLength: 16, maxLength: 16 })
      .chain((value) => fc.constantFrom(` ${value}`, `${value}\n`, `${value}\u0000`, `"${value}"`, value.replace(/.$/, 'g'), value.replace(/^./, '\uff10'))),
    fc.string({ minLength: 1_000, maxLength: 5_000 }),
  );
}

const DIGITS_ONLY = /^[0-9]{1,15}$/;

/** Query values of every kind: digits with leading zeros, signs, decimals, exponents, unicode digits, noise. */
function queryValueCandidates(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.stringMatching(/^[0-9]{1,20}$/),
    fc.stringMatching(/^0{0,5}[0-9]{1,3}$/),
    fc.integer({ min: -1_000, max: 1_000 }).map(String),
    fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
    fc.double().map(String),
    fc.integer({ min: 0, max: 200 }).chain((n) => fc.constantFrom(`${n}.0`, `+${n}`, ` ${n}`, `${n} `, `${n}e0`, `0x${n.toString(16)}`, `${n}\n`)),
    fc.constantFrom('', '٣', '５', 'NaN', 'Infinity', '-0', '1_000'),
  );
}

/** What the spec's rule says about a `limit`/`offset` value: a whole number in [min, max], written in at most 15 decimal digits. */
function expectedWholeNumber(text: string, min: number, max: number): number | undefined {
  if (!DIGITS_ONLY.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

describe('watermark validator against arbitrary strings', () => {
  it(
    'accepts exactly /^[0-9a-f]{16}$/, and every refusal is a bounded message starting with "watermark must"',
    () => {
      let tried = 0;
      let accepted = 0;
      fc.assert(
        fc.property(watermarkCandidates(), (value) => {
          tried += 1;
          const problem = watermarkProblem(value);
          const valid = /^[0-9a-f]{16}$/.test(value);
          expect(problem === undefined).toBe(valid);
          if (valid) {
            accepted += 1;
            return;
          }
          expect(problem).toMatch(/^watermark must /);
          // The message quotes at most a 16-character suggestion, never the caller's input, however long or odd it is.
          expect(problem?.length).toBeLessThan(160);
        }),
        { numRuns: PROPERTY_RUNS },
      );
      reportFigure(`watermark property: ${tried} strings tried, ${accepted} valid accepted, ${tried - accepted} refused with a message`);
    },
    timeoutFor(60),
  );

  it(
    'gives the same verdict and message through the revoke-bulk body schema as the rule itself',
    () => {
      fc.assert(
        fc.property(watermarkCandidates(), (watermark) => {
          const result = RevokeBulkBody.safeParse({ watermark });
          const problem = watermarkProblem(watermark);
          expect(result.success).toBe(problem === undefined);
          if (!result.success) expect(result.error.issues[0]?.message).toBe(problem);
        }),
        { numRuns: PROPERTY_RUNS },
      );
    },
    timeoutFor(60),
  );
});

describe('limit and offset parsing against arbitrary strings', () => {
  it(
    'accepts exactly the whole numbers 1..100 for limit and 0..999999999999999 for offset, with the value they name',
    () => {
      let tried = 0;
      let accepted = 0;
      fc.assert(
        fc.property(queryValueCandidates(), queryValueCandidates(), (limit, offset) => {
          tried += 2;
          const expectedLimit = expectedWholeNumber(limit, 1, KEYS_PAGE.maxLimit);
          const expectedOffset = expectedWholeNumber(offset, 0, KEYS_PAGE.maxOffset);
          accepted += Number(expectedLimit !== undefined) + Number(expectedOffset !== undefined);

          const limitOnly = ListKeysQuery.safeParse({ limit });
          expect(limitOnly.success ? limitOnly.data : undefined).toEqual(expectedLimit === undefined ? undefined : { limit: expectedLimit, offset: 0 });
          if (!limitOnly.success) expect(limitOnly.error.issues[0]?.message).toBe('limit must be a whole number between 1 and 100');

          const offsetOnly = ListKeysQuery.safeParse({ offset });
          expect(offsetOnly.success ? offsetOnly.data : undefined).toEqual(expectedOffset === undefined ? undefined : { limit: 50, offset: expectedOffset });
          if (!offsetOnly.success) expect(offsetOnly.error.issues[0]?.message).toBe('offset must be a whole number between 0 and 999999999999999');
        }),
        { numRuns: PROPERTY_RUNS },
      );
      reportFigure(`limit/offset property: ${tried} query values tried, ${accepted} in range and accepted, the rest refused`);
    },
    timeoutFor(60),
  );

  it(
    'answers through the list-keys handler 200 with that page size exactly when the rule accepts, else 400 naming the parameter',
    async () => {
      await fc.assert(
        fc.asyncProperty(queryValueCandidates(), async (limit) => {
          // A fresh project of a full page of keys per run: the runs together would exceed the rate limit of one.
          const { store, handlers } = memoryApi();
          store.addKeys(
            PROJECT_ID,
            Array.from({ length: KEYS_PAGE.maxLimit }, () => ({})),
          );
          const listKeysAfter = vi.spyOn(store, 'listKeysAfter');
          const reply = await invoke(handlers['list-keys'], apiEvent('list-keys', { projectId: PROJECT_ID, query: { limit } }));
          const expected = expectedWholeNumber(limit, 1, KEYS_PAGE.maxLimit);
          if (expected === undefined) {
            expect(reply.status).toBe(400);
            expect(reply.body).toEqual({ error: 'limit must be a whole number between 1 and 100' });
            expect(listKeysAfter).not.toHaveBeenCalled();
          } else {
            expect(reply.status).toBe(200);
            expect(reply.body.keys).toHaveLength(expected);
          }
        }),
        { numRuns: Math.max(200, HARDENING_RUNS * 10) },
      );
    },
    timeoutFor(60),
  );
});

describe('rate-limit window arithmetic', () => {
  it(
    'lets through exactly min(n, 100) of the requests in each aligned minute, whatever their times',
    async () => {
      let requests = 0;
      let fullWindows = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 4_000_000_000 }),
          // Bunched into three minutes, so most windows see more requests than the limit.
          fc.array(fc.integer({ min: 0, max: 179 }), { minLength: 1, maxLength: 500, size: 'max' }),
          async (start, offsets) => {
            const store = new MemoryStores();
            const times = offsets.map((offset) => start + offset).sort((a, b) => a - b);
            const allowedPerWindow = new Map<number, number>();
            const sentPerWindow = new Map<number, number>();
            for (const now of times) {
              const decision = await consumeRateLimit(store, 'token-hash', now);
              const window = now - (now % 60);
              sentPerWindow.set(window, (sentPerWindow.get(window) ?? 0) + 1);
              if (decision.allowed) allowedPerWindow.set(window, (allowedPerWindow.get(window) ?? 0) + 1);
              requests += 1;
            }
            for (const [window, sent] of sentPerWindow) {
              expect(allowedPerWindow.get(window) ?? 0).toBe(Math.min(sent, RATE_LIMIT.requests));
              if (sent > RATE_LIMIT.requests) fullWindows += 1;
            }
          },
        ),
        { numRuns: Math.max(200, HARDENING_RUNS * 10) },
      );
      reportFigure(`rate-limit window property: ${requests} requests at random times, ${fullWindows} windows pushed past 100`);
    },
    timeoutFor(60),
  );

  it(
    'tells a refused caller to come back exactly when the next window opens, and that request is allowed',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 4_000_000_000 }), async (now) => {
          const store = new MemoryStores();
          for (let i = 0; i < RATE_LIMIT.requests; i++) await consumeRateLimit(store, 'token-hash', now);
          const refused = await consumeRateLimit(store, 'token-hash', now);
          expect(refused.allowed).toBe(false);
          const retryAfter = Number(errorHeadersOf(new RateLimited(refused.resetSeconds, 'Rate limit exceeded'))['Retry-After']);
          expect(retryAfter).toBe(refused.resetSeconds);
          expect((now + retryAfter) % 60).toBe(0);
          expect(await consumeRateLimit(store, 'token-hash', now + retryAfter - 1)).toMatchObject({ allowed: false });
          expect(await consumeRateLimit(store, 'token-hash', now + retryAfter)).toMatchObject({ allowed: true, remaining: RATE_LIMIT.requests - 1 });
        }),
        { numRuns: Math.max(100, HARDENING_RUNS * 5) },
      );
    },
    timeoutFor(60),
  );

  it(
    "counts every request of a minute in that minute's window, and counts remaining down from 99 to 0",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 4_000_000_000 }), async (now) => {
          const store = new MemoryStores();
          const remaining: number[] = [];
          for (let i = 0; i < RATE_LIMIT.requests; i++) remaining.push((await consumeRateLimit(store, 'token-hash', now)).remaining);
          expect(remaining).toEqual(Array.from({ length: RATE_LIMIT.requests }, (_, i) => RATE_LIMIT.requests - 1 - i));
          const { start } = rateWindowAt(now);
          expect(store.rateWindows()).toEqual([{ bucket: 'token-hash', start, seconds: RATE_LIMIT.windowSeconds, requests: RATE_LIMIT.requests }]);
        }),
        { numRuns: Math.max(100, HARDENING_RUNS * 5) },
      );
    },
    timeoutFor(60),
  );
});
