import type { TracedWatermark, TraceLeakResponse } from '#schemas/responses';
import { mapPagesBounded } from './concurrency';
import { readHiddenMarks } from './hidden-mark';
import type { Project } from './model';
import type { ProjectStore } from './ports';
import { WatermarkScanner } from './watermark-scan';

/**
 * Tracing a leaked dump (DESIGN.md, "Leak tracing that survives obfuscation: the hidden mark"): the visible
 * `WM_<watermark>` markers it holds and the watermarks its hidden mark names, each with the keys carrying it.
 */

/** The largest dump a trace reads: 5 MiB, the largest script a version holds. */
export const MAX_DUMP_BYTES = 5 * 1024 * 1024;
/**
 * Watermarks one trace answers with their keys, visible markers first: a dump of junk markers must not turn one
 * request into thousands of index queries. A real leak names one or two.
 */
export const MAX_TRACED_WATERMARKS = 50;
/** Keys listed per watermark: a watermark is one key's unless the publisher issued a batch under one. */
export const MAX_KEYS_PER_TRACED_WATERMARK = 100;
/** Watermarks whose keys are looked up at once. */
const KEY_LOOKUPS_IN_FLIGHT = 8;

/** Why a dump cannot be traced, in words naming the problem; undefined when it can. */
export function dumpProblem(dump: string): string | undefined {
  const bytes = Buffer.byteLength(dump, 'utf8');
  if (bytes === 0) return 'The dump is empty: send the leaked text as the body, 1 byte to 5 MiB';
  if (bytes > MAX_DUMP_BYTES) return `The dump is ${bytes} bytes: at most ${MAX_DUMP_BYTES} (5 MiB); send the part that holds the script`;
  // What invalid bytes become on their way in as text: the dump was not UTF-8.
  if (dump.includes('\uFFFD')) return 'The dump is not valid UTF-8: send it as UTF-8 text (Content-Type: text/plain; charset=utf-8)';
  return undefined;
}

/** The watermarks the dump names, visible markers first (by how often they occur), then hidden readings. */
export async function traceLeak(
  store: Pick<ProjectStore, 'listVersions' | 'listKeysWithWatermark'>,
  project: Pick<Project, 'id'>,
  dump: string,
): Promise<TraceLeakResponse> {
  const scanner = new WatermarkScanner();
  scanner.push(new TextEncoder().encode(dump));
  const visible = [...scanner.finish().watermarks].sort(([, a], [, b]) => b - a);
  const versions = await store.listVersions(project.id);
  const hidden =
    versions.length > 0
      ? readHiddenMarks(
          dump,
          versions.map((version) => version.id),
        ).sort((a, b) => b.agreement - a.agreement)
      : [];
  const named: Array<Omit<TracedWatermark, 'keys'>> = [
    ...visible.map(([watermark]) => ({ watermark, mark: 'visible' as const, version_id: null, agreement: null })),
    ...hidden.map(({ watermark, versionId, agreement }) => ({ watermark, mark: 'hidden' as const, version_id: versionId, agreement })),
  ].slice(0, MAX_TRACED_WATERMARKS);
  const keysOf = new Map<string, TracedWatermark['keys']>();
  const distinct = [...new Set(named.map(({ watermark }) => watermark))];
  await mapPagesBounded(pagesOf(distinct), KEY_LOOKUPS_IN_FLIGHT, async (watermark) => {
    const { keys } = await store.listKeysWithWatermark(project.id, watermark, 0, MAX_KEYS_PER_TRACED_WATERMARK);
    keysOf.set(
      watermark,
      keys.map(({ id, revoked }) => ({ id, revoked })),
    );
  });
  return { found: named.map((entry) => ({ ...entry, keys: keysOf.get(entry.watermark) ?? [] })) };
}

async function* pagesOf<T>(items: T[]): AsyncIterable<T[]> {
  yield items;
}
