/**
 * Run `work` on every item of the async pages with at most `concurrency` calls in flight, starting items as
 * soon as their page arrives. Resolves with the results in completion order; the first failure rejects.
 * `stopWhen`, asked before each item is started, ends the run early: calls in flight finish, no new one starts,
 * and `stopped` says so.
 */
export async function mapPagesBounded<T, R>(
  pages: AsyncIterable<T[]>,
  concurrency: number,
  work: (item: T) => Promise<R>,
  stopWhen: () => boolean = () => false,
): Promise<{ results: R[]; stopped: boolean }> {
  const results: R[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let stopped = false;
  for await (const page of pages) {
    for (const item of page) {
      if (failure) break;
      if (stopWhen()) {
        stopped = true;
        break;
      }
      const task: Promise<void> = work(item)
        .then((result) => void results.push(result))
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
    if (failure || stopped) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  return { results, stopped };
}
