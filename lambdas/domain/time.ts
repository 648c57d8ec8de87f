/** UTC calendar arithmetic on Unix seconds; every window of the detectors is aligned to UTC. */

export const HOUR_SECONDS = 3600;
export const DAY_SECONDS = 86_400;

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of `at` as YYYY-MM-DD. */
export const utcDate = (at: number): string => new Date(at * 1000).toISOString().slice(0, 10);

/** Unix seconds of 00:00:00 UTC on `date`, or undefined when `date` is not a real YYYY-MM-DD day. */
export function dayStart(date: string): number | undefined {
  const match = DATE_PATTERN.exec(date);
  if (!match) return undefined;
  const millis = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  // Date.UTC rolls 2024-02-30 over to March; a real day survives the round trip unchanged.
  return new Date(millis).toISOString().slice(0, 10) === date ? millis / 1000 : undefined;
}

/** `date` moved by `days` (negative: earlier). */
export function addDays(date: string, days: number): string {
  const start = dayStart(date);
  if (start === undefined) throw new Error(`Not a YYYY-MM-DD date: ${date}`);
  return utcDate(start + days * DAY_SECONDS);
}

/** Start of the UTC hour holding `at`. */
export const hourStart = (at: number): number => at - (at % HOUR_SECONDS);

/** The UTC hour holding `at` as YYYY-MM-DDTHH, as it appears in dedup keys. */
export const utcHour = (at: number): string => new Date(hourStart(at) * 1000).toISOString().slice(0, 13);
