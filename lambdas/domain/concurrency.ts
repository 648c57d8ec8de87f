/**
 * Run `work` on every item of the async pages with at most `concurrency` calls in flight, starting items as
 * soon as their page arrives. Resolves with the results in completion order; the first failure rejects.
 */
export async function mapPagesBounded<T, R>(
  pages: AsyncIterable<T[]>,
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for await (const page of pages) {
    for (const item of page) {
      if (failure) break;
      const task: Promise<void> = work(item)
        .then((result) => void results.push(result))
        .catch((error: unknown) => void (failure ??= { error }))
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  return results;
}
