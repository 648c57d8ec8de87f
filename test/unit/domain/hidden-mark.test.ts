import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AGREEMENT_NEEDED, planStamp, readHiddenMarks, stampWithPlan } from '#domain/hidden-mark';
import { luauTokens } from '#domain/luau-lexer';
import { stampWatermark } from '#domain/scripts';
import { createLuaVm } from '#loader-runner/lua-vm';
import { obfuscatedScript, readableScript, seededRandom } from '#test-support/luau-fixtures';

/**
 * The hidden mark (DESIGN.md, "Leak tracing that survives obfuscation: the hidden mark"), measured: every fixture ×
 * every attack of the contract names the right watermark and no other; random text, unstamped scripts and other
 * projects' copies name none; the stamped scripts run as the unstamped ones do.
 */

const VERSION = 'ver_hidden_mark_test_0000001';
const OTHER_VERSIONS = ['ver_other_project_00000000001', 'ver_other_project_00000000002'];
const WATERMARK = '3f9a0c12d4e5b678';
const SECOND = 'a0b1c2d3e4f50617';

const FIXTURES = {
  'obfuscated, one long line (200 KB)': obfuscatedScript(1, 200_000),
  'obfuscated with long strings and comments (120 KB)': obfuscatedScript(2, 120_000, { long: true }),
  'readable, 1,500 lines': readableScript(3, 1500),
  'readable with a WM_ placeholder, 1,500 lines': readableScript(4, 1500, { placeholder: true }),
} as const;

const named = (dump: string, versions: readonly string[] = [VERSION]) => readHiddenMarks(dump, versions).map((reading) => reading.watermark);

const PROSE =
  'Here\'s the leak I promised, don\'t share it!! [see below] "quoted" {braces} -- not code\n' +
  'paste-site header: 10 views · 2 days ago · raw text [[ download ]]\n';

/** Keeps [from, from + half) of the text, `at` in 0..1 choosing where. */
const halfAt = (text: string, at: number) => {
  const half = Math.ceil(text.length / 2);
  const from = Math.floor(at * (text.length - half));
  return text.slice(from, from + half);
};

const ATTACKS: Record<string, (dump: string, random: () => number) => string> = {
  'first line deleted': (dump) => dump.slice(dump.indexOf('\n') + 1),
  'every WM_ marker replaced': (dump) => dump.replace(/WM_[0-9a-f]{16}/g, 'WM_0000000000000000'),
  'every WM_ marker deleted': (dump) => dump.replace(/WM_[0-9a-f]{16}/g, ''),
  'LF to CRLF': (dump) => dump.replace(/\n/g, '\r\n'),
  'CRLF back to LF': (dump) => dump.replace(/\n/g, '\r\n').replace(/\r\n/g, '\n'),
  'trailing whitespace trimmed': (dump) => dump.replace(/[ \t]+$/gm, ''),
  'space and tab runs collapsed to one space': (dump) => dump.replace(/[ \t]+/g, ' '),
  'a contiguous half (random start)': (dump, random) => halfAt(dump, random()),
  'the first half': (dump) => halfAt(dump, 0),
  'the last half': (dump) => halfAt(dump, 1),
  'embedded among other text': (dump) => `${PROSE}${dump}\n${PROSE}`,
  'all at once': (dump, random) =>
    `${PROSE}${halfAt(
      dump
        .slice(dump.indexOf('\n') + 1)
        .replace(/WM_[0-9a-f]{16}/g, '')
        .replace(/\n/g, '\r\n')
        .replace(/[ \t]+$/gm, '')
        .replace(/[ \t]+/g, ' '),
      random(),
    )}${PROSE}`,
};

describe('the hidden mark', () => {
  for (const [fixture, script] of Object.entries(FIXTURES)) {
    describe(fixture, () => {
      const plan = planStamp(script);
      const stamped = stampWithPlan(plan, VERSION, WATERMARK);

      it('has places enough not to be weak', () => {
        expect(plan.summary.positions).toBeGreaterThan(1000);
        expect(plan.summary.weak).toBe(false);
      });

      it('changes no token, no string and no line count; keeps the visible marks of "Script delivery"', () => {
        const visible = stampWatermark(script, WATERMARK);
        const tokens = (text: string) => luauTokens(text).map(([, start, end]) => text.slice(start, end));
        expect(tokens(stamped)).toEqual(tokens(visible));
        expect(stamped.split('\n')).toHaveLength(visible.split('\n').length);
        expect(stamped).not.toBe(visible);
      });

      it('runs in the Lua runner with the same result as the unstamped script', () => {
        const original = createLuaVm().run(script, 'original');
        expect(original.ok).toBe(true);
        expect(createLuaVm().run(stamped, 'stamped')).toEqual(original);
      });

      for (const [attack, apply] of Object.entries(ATTACKS)) {
        it(`names its watermark, and no other, after: ${attack}`, () => {
          const random = seededRandom(attack.length * 7919 + fixture.length);
          for (let trial = 0; trial < 3; trial++) {
            const readings = readHiddenMarks(apply(stamped, random), [...OTHER_VERSIONS, VERSION]);
            expect(readings.map(({ watermark, versionId }) => ({ watermark, versionId }))).toEqual([{ watermark: WATERMARK, versionId: VERSION }]);
            expect(readings[0]?.agreement).toBeGreaterThanOrEqual(AGREEMENT_NEEDED);
          }
        });
      }

      it('names nothing in the unstamped script, nor in its visible-only copy', () => {
        expect(named(script)).toEqual([]);
        expect(named(stampWatermark(script, WATERMARK))).toEqual([]);
      });

      it("names nothing for another project's versions (the check is keyed by the version)", () => {
        expect(named(stamped, OTHER_VERSIONS)).toEqual([]);
      });

      it("names at most the two keys of a dump made of two keys' copies (here both)", () => {
        const other = stampWithPlan(plan, VERSION, SECOND);
        const random = seededRandom(fixture.length);
        for (const dump of [`${stamped}\n${other}`, `${halfAt(other, random())}\n${halfAt(stamped, random())}`]) {
          expect(named(dump).sort()).toEqual([WATERMARK, SECOND].sort());
        }
        // Interleaved line by line the copies mix in every window: whatever is read must still be one of the two.
        const a = stamped.split('\n');
        const b = other.split('\n');
        const mixed = a.map((line, i) => (i % 2 === 0 ? line : (b[i] ?? ''))).join('\n');
        for (const watermark of named(mixed)) expect([WATERMARK, SECOND]).toContain(watermark);
      });
    });
  }

  it('serves a script that does not lex with the visible marks only, and calls its mark weak', () => {
    const script = 'local a = "never closed\nprint(a)';
    const plan = planStamp(script);
    expect(plan.summary).toEqual({ positions: 0, weak: true });
    expect(stampWithPlan(plan, VERSION, WATERMARK)).toBe(stampWatermark(script, WATERMARK));
  });

  it('calls the mark of a short script weak, and still stamps what places it has', () => {
    const script = readableScript(9, 60);
    const plan = planStamp(script);
    expect(plan.summary.weak).toBe(true);
    expect(plan.summary.positions).toBeGreaterThan(0);
    expect(stampWithPlan(plan, VERSION, WATERMARK)).not.toBe(stampWatermark(script, WATERMARK));
  });

  it('never names a watermark in random token soup with random whitespace (10,000 texts)', () => {
    const PIECES = ['a', 'b', '=', '(', ')', ',', '{', '}', '[', ']', ';', '1', '"s"', '+', 'local', 'end', '..', 'x.y', ':', '0x1F'];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 50, max: 3000 }), (seed, count) => {
        const random = seededRandom(seed);
        let text = '';
        for (let i = 0; i < count; i++) {
          text += PIECES[Math.floor(random() * PIECES.length)];
          const gap = random();
          text += gap < 0.4 ? '' : gap < 0.8 ? ' ' : gap < 0.9 ? '\n' : '\t ';
        }
        expect(readHiddenMarks(text, [VERSION, ...OTHER_VERSIONS])).toEqual([]);
      }),
      { numRuns: 10_000 },
    );
  });

  it('never names a watermark in a real script whose places hold random bits (what a forged copy would be)', () => {
    const script = obfuscatedScript(11, 60_000);
    const plan = planStamp(script);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const random = seededRandom(seed);
        const decoder = new TextDecoder();
        let body = '';
        let from = 0;
        plan.slots.forEach((slot, i) => {
          const cut = plan.cuts[i] ?? 0;
          body += decoder.decode(plan.base.subarray(from, cut)) + (slot < 0 ? 'WM_XXXXXXXXXXXXXXXX' : random() < 0.5 ? ' ' : '');
          from = cut;
        });
        body += decoder.decode(plan.base.subarray(from));
        expect(readHiddenMarks(body, [VERSION, ...OTHER_VERSIONS])).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
