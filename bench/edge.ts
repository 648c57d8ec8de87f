import { EDGE_PRICES } from './support/prices';
import { type BenchResult, row } from './support/report';
import { percentile, round } from './support/stats';

const NAME = 'edge';

/**
 * What the front door changes, modelled where it cannot be measured from this machine (docs/loader.md, "Latency
 * with and without the edge"; docs/cost.md, "The front door"): a loader run's wait from three buyers' cities to a
 * stack in us-east-1, with and without CloudFront, and the price per million checks and 256 KiB fetches.
 */
const EDGE_MODEL = {
  /**
   * Round trips to us-east-1 over AWS's network from the Region nearest each city (published inter-Region medians,
   * e.g. AWS Network Manager's and cloudping's: sa-east-1 115-125 ms, eu-central-1 88-95 ms, ap-southeast-1
   * 210-230 ms); a buyer's public path to us-east-1 is about as long plus the buyer's last mile.
   */
  cities: [
    { city: 'São Paulo', regionRttMs: 120, cloudFrontRegion: 'South America' },
    { city: 'Frankfurt', regionRttMs: 90, cloudFrontRegion: 'Europe' },
    { city: 'Singapore', regionRttMs: 220, cloudFrontRegion: 'Asia Pacific' },
  ],
  /** A home connection's round trip to the city's edge location (CloudFront has edges in all three cities). */
  lastMileRttMs: 15,
  /** A fresh HTTPS connection costs TCP's handshake, TLS 1.3's and the request: three round trips; a reused one, one. */
  freshRoundTrips: 3,
  /** The Region's answer: the handler and its one DynamoDB round trip (Lambda warm). */
  serverMs: 15,
  /** CloudFront's own handling of a request it does not cache. */
  edgeMs: 2,
  /** The share of an edge's requests that find a pooled connection to the origin open (a busy edge keeps them). */
  pooledShare: 0.98,
  /** Each round trip varies by up to this share either way (uniform), so the percentiles spread. */
  jitter: 0.15,
  runs: 20_000,
} as const;

/** Bytes a check's answer and a 256 KiB fetch's put on the wire, headers included. */
const CHECK_BYTES = 800;
const FETCH_BYTES = 256 * 1024 + 600;
type CloudFrontRegion = keyof typeof EDGE_PRICES.cloudFrontPerMillion;

/** A seeded generator (mulberry32), so the bench's table is the same every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One loader run's wait, in ms. Without the edge every round trip crosses to the Region; with it, the handshakes end
 * at the edge and one request crosses on the edge's pooled connection (or opens one, the rare time none is open).
 */
function runMs(regionRttMs: number, options: { edge: boolean; reused: boolean }, random: () => number): number {
  const m = EDGE_MODEL;
  const vary = (ms: number) => ms * (1 + m.jitter * (2 * random() - 1));
  const trips = options.reused ? 1 : m.freshRoundTrips;
  if (!options.edge) {
    let total = m.serverMs;
    for (let i = 0; i < trips; i++) total += vary(regionRttMs + m.lastMileRttMs);
    return total;
  }
  let total = m.serverMs + m.edgeMs;
  for (let i = 0; i < trips; i++) total += vary(m.lastMileRttMs);
  const originTrips = random() < m.pooledShare ? 1 : m.freshRoundTrips;
  for (let i = 0; i < originTrips; i++) total += vary(regionRttMs);
  return total;
}

interface CityLatency {
  city: string;
  /** p50 and p95 of a run with a fresh connection (most executors) and with a reused one, without and with the edge. */
  fresh: { direct: [number, number]; edge: [number, number] };
  reused: { direct: [number, number]; edge: [number, number] };
}

function simulateLatency(seed = 32): CityLatency[] {
  const random = seeded(seed);
  return EDGE_MODEL.cities.map(({ city, regionRttMs }) => {
    const spread = (edge: boolean, reused: boolean): [number, number] => {
      const samples = Array.from({ length: EDGE_MODEL.runs }, () => runMs(regionRttMs, { edge, reused }, random));
      return [round(percentile(samples, 50), 0), round(percentile(samples, 95), 0)];
    };
    return {
      city,
      fresh: { direct: spread(false, false), edge: spread(true, false) },
      reused: { direct: spread(false, true), edge: spread(true, true) },
    };
  });
}

/** Per million checks or fetches answered `bytes` each, for viewers in `where`: direct, through CloudFront, and with WAF. */
function costPerMillion(regionPart: number, bytes: number, where: CloudFrontRegion) {
  const gb = (bytes * 1e6) / 2 ** 30;
  const direct = regionPart + gb * EDGE_PRICES.regionOutPerGb;
  const edge = regionPart + EDGE_PRICES.cloudFrontPerMillion[where] + gb * EDGE_PRICES.cloudFrontPerGb[where];
  return { direct: round(direct, 2), edge: round(edge, 2), edgeWithWaf: round(edge + EDGE_PRICES.wafPerMillion, 2) };
}

export async function benchEdge(log: (line: string) => void): Promise<BenchResult> {
  const latency = simulateLatency();
  const rows = latency.flatMap((city) => [
    row(NAME, `${city.city}: a run, fresh connection, direct to us-east-1 (p50)`, city.fresh.direct[0], 'ms', { note: `p95 ${city.fresh.direct[1]} ms` }),
    row(NAME, `${city.city}: a run, fresh connection, through the edge (p50)`, city.fresh.edge[0], 'ms', {
      note: `p95 ${city.fresh.edge[1]} ms; ${round(city.fresh.direct[0] / city.fresh.edge[0], 1)}× sooner`,
    }),
    row(NAME, `${city.city}: a run, reused connection, direct (p50)`, city.reused.direct[0], 'ms', { note: `p95 ${city.reused.direct[1]} ms` }),
    row(NAME, `${city.city}: a run, reused connection, through the edge (p50)`, city.reused.edge[0], 'ms', { note: `p95 ${city.reused.edge[1]} ms` }),
  ]);
  const costs = EDGE_MODEL.cities.map(({ city, cloudFrontRegion }) => ({
    city,
    check: costPerMillion(EDGE_PRICES.checkRegionPerMillion, CHECK_BYTES, cloudFrontRegion),
    fetch: costPerMillion(EDGE_PRICES.fetchRegionPerMillion, FETCH_BYTES, cloudFrontRegion),
  }));
  for (const cost of costs) {
    rows.push(
      row(NAME, `${cost.city}: cost per million checks, direct / edge / edge + WAF`, cost.check.edge, 'USD', {
        note: `direct ${cost.check.direct}, with WAF ${cost.check.edgeWithWaf}`,
      }),
      row(NAME, `${cost.city}: cost per million 256 KiB fetches, direct / edge / edge + WAF`, cost.fetch.edge, 'USD', {
        note: `direct ${cost.fetch.direct}, with WAF ${cost.fetch.edgeWithWaf}`,
      }),
    );
  }
  log(`${NAME}: latency model over ${EDGE_MODEL.runs} runs a case, costs from list prices`);
  return { rows, details: { model: EDGE_MODEL, prices: EDGE_PRICES, latency, costs } };
}
