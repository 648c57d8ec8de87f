import { describe, expect, it } from 'vitest';
import { mapPagesBounded } from '#domain/concurrency';

async function* pagesOf<T>(pages: T[][], beforeEachPage: () => Promise<void> = async () => {}): AsyncIterable<T[]> {
  for (const page of pages) {
    await beforeEachPage();
    yield page;
  }
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('mapPagesBounded', () => {
  it('never has more than `concurrency` calls in flight, and reaches that bound', async () => {
    let inFlight = 0;
    let peak = 0;
    const { results } = await mapPagesBounded(pagesOf([range(0, 30), range(30, 30), range(60, 40)]), 7, async (item) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, (item * 7) % 5));
      inFlight--;
      return item;
    });
    expect(peak).toBe(7);
    expect(results).toHaveLength(100);
  });

  it('returns one result per item across every page, each exactly once', async () => {
    const { results } = await mapPagesBounded(pagesOf([range(0, 5), [], range(5, 3), range(8, 12)], tick), 4, async (item) => {
      await tick();
      return item * 2;
    });
    expect([...results].sort((a, b) => a - b)).toEqual(range(0, 20).map((item) => item * 2));
  });

  it('starts work on a page before the next page has arrived', async () => {
    const started: number[] = [];
    let secondPageRequestedAfter = -1;
    let pageCount = 0;
    await mapPagesBounded(
      pagesOf([range(0, 3), range(3, 3)], async () => {
        if (pageCount++ === 1) secondPageRequestedAfter = started.length;
      }),
      10,
      async (item) => {
        started.push(item);
        return item;
      },
    );
    expect(secondPageRequestedAfter).toBe(3);
  });

  it('resolves with an empty list when there is nothing to do', async () => {
    expect(await mapPagesBounded(pagesOf<number>([]), 3, async (item) => item)).toEqual({ results: [], stopped: false });
  });

  it('stops starting items once `stopWhen` holds, lets the calls in flight finish, reads no further page and says it stopped', async () => {
    let started = 0;
    let settled = 0;
    let pagesRead = 0;
    const outcome = await mapPagesBounded(
      pagesOf([range(0, 10), range(10, 10), range(20, 10)], async () => void pagesRead++),
      4,
      async (item) => {
        started++;
        await tick();
        settled++;
        return item;
      },
      () => started >= 6,
    );
    expect(outcome.stopped).toBe(true);
    expect(started).toBe(6);
    expect(settled).toBe(6);
    expect([...outcome.results].sort((a, b) => a - b)).toEqual(range(0, 6));
    expect(pagesRead).toBe(1);
  });

  it('does not call itself stopped when `stopWhen` first holds after the last item started', async () => {
    let started = 0;
    const outcome = await mapPagesBounded(
      pagesOf([range(0, 5)]),
      2,
      async (item) => {
        started++;
        return item;
      },
      () => started >= 5,
    );
    expect(outcome).toMatchObject({ stopped: false });
    expect(outcome.results).toHaveLength(5);
  });

  it('rejects with the first failure, waits for calls in flight, and starts no more', async () => {
    let started = 0;
    let settled = 0;
    const outcome = mapPagesBounded(pagesOf([range(0, 50)]), 5, async (item) => {
      started++;
      await tick();
      settled++;
      if (item === 3) throw new Error('write failed for item 3');
      return item;
    });
    await expect(outcome).rejects.toThrow('write failed for item 3');
    expect(started).toBeLessThan(50);
    expect(settled).toBe(started);
  });

  it('rejects when reading a page fails', async () => {
    async function* failing(): AsyncIterable<number[]> {
      yield [1, 2];
      throw new Error('query failed');
    }
    await expect(mapPagesBounded(failing(), 2, async (item) => item)).rejects.toThrow('query failed');
  });
});
