/**
 * How hard the hardening tests push. CI runs the defaults; `HARDENING_RUNS=500 npx vitest run ...` turns every
 * race and fault loop up (and the property tests with it) to produce the figures of docs/security.md.
 */
export const HARDENING_RUNS = Math.max(1, Number(process.env.HARDENING_RUNS ?? 20) || 20);

/** Inputs per property: cheap pure checks get many. */
export const PROPERTY_RUNS = Math.max(1_000, HARDENING_RUNS * 100);

/** One line a reader of the test output can copy into the figures of docs/security.md. */
export function reportFigure(text: string): void {
  console.log(`[hardening] ${text}`);
}

/**
 * A hang guard for a loop of HARDENING_RUNS repetitions of about `msPerRun` each, far above a normal run on a busy
 * machine: the loops are bounded by their count, never by the clock. The floor is the integration project's own.
 */
export function timeoutFor(msPerRun: number, floorMs = 300_000): number {
  return Math.max(floorMs, HARDENING_RUNS * msPerRun * 10);
}
