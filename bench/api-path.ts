import { hashToken, issueToken, newApiToken } from '#domain/tokens';
import { nowSeconds } from './support/fixtures';
import { RssSampler, type StackProcess, stackStores } from './support/local-stack';
import { type BenchResult, row } from './support/report';
import { median, percentile, round } from './support/stats';

const NAME = 'api-path';
const API_PATH_SETTINGS = {
  tokens: 20,
  /** Under the 100/min limit, so every request is served and the limiter is part of the path, not the result. */
  requestsPerToken: 90,
  /** The concurrent phase in rounds, each with a third of every token's requests. */
  rounds: 3,
  /** Requests in flight from the client. */
  concurrency: 16,
  /** Sequential requests (one more token), for latency without queueing; one more token warms up. */
  sequentialRequests: 90,
} as const;

interface Sample {
  ms: number;
  status: number;
}

/**
 * GET versions through the local server (`npm start` in its own process: HTTP → gateway emulation → authorizer
 * → rate limit → handler → DynamoDB Local), with many tokens, and the peak memory of that process meanwhile.
 */
export async function benchApiPath(stack: StackProcess, log: (line: string) => void): Promise<BenchResult> {
  const s = API_PATH_SETTINGS;
  const { info } = stack;
  const tokens = await createTokens(stack, s.tokens + 2);
  const url = `${info.baseUrl}/v1/projects/${info.projectId}/versions`;
  const get = async (token: string): Promise<Sample> => {
    const started = performance.now();
    const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    return { ms: performance.now() - started, status: response.status };
  };

  // A token's worth of concurrent requests first, not counted: DynamoDB Local's JIT and the server's first
  // connections would otherwise land in the first round.
  const warmUpToken = tokens.pop() ?? '';
  await runConcurrently(
    Array.from({ length: s.requestsPerToken }, () => warmUpToken),
    s.concurrency,
    get,
  );
  // One token for sequential requests.
  const sequential: Sample[] = [];
  const sequentialToken = tokens.pop() ?? '';
  for (let i = 0; i < s.sequentialRequests; i++) sequential.push(await get(sequentialToken));

  // Rounds of every token's share, tokens interleaved at random as independent clients would arrive;
  // the throughput is the median of the rounds, latencies are over every request.
  const perRound = s.requestsPerToken / s.rounds;
  const sampler = new RssSampler(stack.pid);
  sampler.start();
  const concurrent: Sample[] = [];
  const roundSeconds: number[] = [];
  for (let r = 0; r < s.rounds; r++) {
    const queue = shuffle(tokens.flatMap((token) => Array.from({ length: perRound }, () => token)));
    const started = performance.now();
    concurrent.push(...(await runConcurrently(queue, s.concurrency, get)));
    roundSeconds.push((performance.now() - started) / 1000);
  }
  const memory = sampler.stop();
  const throughputs = roundSeconds.map((seconds) => (tokens.length * perRound) / seconds);
  log(`${NAME}: ${concurrent.length} requests in ${s.rounds} rounds of ${roundSeconds.map((x) => round(x, 1)).join(', ')} s`);

  const failed = [...sequential, ...concurrent].filter((r) => r.status !== 200);
  const ms = (list: Sample[], p: number) =>
    round(
      percentile(
        list.map((r) => r.ms),
        p,
      ),
    );
  const javaMiB = Math.max(0, ...Object.values(memory.childrenMiB));
  return {
    rows: [
      row(NAME, `throughput, ${s.concurrency} in flight`, round(median(throughputs), 0), 'req/s', {
        note: `median of ${s.rounds} rounds of ${s.tokens} tokens × ${perRound} requests (${throughputs.map((x) => round(x, 0)).join(', ')} req/s)`,
      }),
      row(NAME, `p50, ${s.concurrency} in flight`, ms(concurrent, 50), 'ms'),
      row(NAME, `p99, ${s.concurrency} in flight`, ms(concurrent, 99), 'ms'),
      row(NAME, 'p50, one at a time', ms(sequential, 50), 'ms'),
      row(NAME, 'p99, one at a time', ms(sequential, 99), 'ms'),
      row(NAME, 'responses other than 200', failed.length, '', { target: { op: '<=', limit: 0 } }),
      row(NAME, 'peak RSS of the local stack (Node)', memory.processMiB, 'MiB', { note: `DynamoDB Local's JVM (its child): ${javaMiB} MiB` }),
    ],
    details: {
      settings: s,
      roundSeconds,
      memory,
      statuses: countBy(failed.map((r) => r.status)),
      sequentialMs: sequential.map((r) => r.ms),
      concurrentMs: concurrent.map((r) => r.ms),
    },
  };
}

/** Tokens of the stack's demo owner, made the way the dashboard makes them (only the hash is stored). */
async function createTokens(stack: StackProcess, count: number): Promise<string[]> {
  const dashboard = stackStores(stack.info);
  try {
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const token = newApiToken();
      await issueToken(dashboard.stores.tokens, { ownerId: stack.info.ownerId, tokenHash: hashToken(token), now: nowSeconds() });
      tokens.push(token);
    }
    return tokens;
  } finally {
    dashboard.close();
  }
}

/** Each token of `queue` requested once, `concurrency` requests in flight. */
async function runConcurrently(queue: string[], concurrency: number, get: (token: string) => Promise<Sample>): Promise<Sample[]> {
  const samples: Sample[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < queue.length) samples.push(await get(queue[next++] ?? ''));
    }),
  );
  return samples;
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
