import { LOADER_LIMITS } from '#domain/key-check';
import { RATE_LIMIT } from '#domain/rate-limit';
import { isQuiet, ROUTES } from '#http/routes';
import type { TokenBucket } from './token-bucket';

/**
 * Every throttle and concurrency reservation of the deployed API in one place, each with why it is the size it is
 * (docs/operations.md).
 */

/**
 * The usage plan's per-token bucket: API Gateway's coarse guard in front of the exact 100/min window the handlers
 * keep in DynamoDB. It must never refuse a client that keeps to the spec's limit (test/stack/usage-plan-sizing.test.ts
 * simulates the worst schedules):
 * - burst 300: the most a compliant client can send in one instant is two full windows back to back (100 at
 *   12:00:59, 100 at 12:01:00); the third window's 100 absorbs the time between API Gateway receiving a request and
 *   the handler counting it, for any such delay under a minute;
 * - rate 2/s: a minute refills 120, more than the 100 a window allows, so a client at the limit for hours never
 *   drains the bucket.
 * A flood from one token gets at most 300 requests plus 2 a second past it.
 */
export const USAGE_PLAN_THROTTLE = {
  burstLimit: 3 * RATE_LIMIT.requests,
  rateLimit: Math.ceil(RATE_LIMIT.requests / RATE_LIMIT.windowSeconds),
} as const satisfies TokenBucket;

/**
 * API Gateway's throttle for all APIs of an account in a Region, and the Regions where it starts at a quarter of
 * that ("Amazon API Gateway quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html: 2,500
 * requests a second, burst 1,250, in these 13). The stack's throttles are sized for 10,000 (test/stack/floods.test.ts);
 * in these Regions the account's throttle refuses first, shared by the owner API and the loader routes, until the
 * quota (Service Quotas code L-8A5B8E43) is raised. `npm run deploy` says so before it deploys there.
 */
export const API_GATEWAY_ACCOUNT_THROTTLE = { rateLimit: 10_000, burstLimit: 5_000 } as const satisfies TokenBucket;

/**
 * The most any one route or method of the stack may burst: a quarter of the account's burst. That burst (5,000) is
 * one bucket every API of the account in the Region draws from, and no quota request raises it ("The burst quota is
 * determined by the API Gateway service team based on the overall RPS quota for the account in the Region. It is
 * not a quota that a customer can control or request changes to", same page). A route allowed the whole of it can
 * empty it in one instant of a flood, and then every route of every API of the account answers 429 until it
 * refills; at a quarter, the two loader routes flooded together leave half of it to the owner API and the rest.
 * test/stack/floods.test.ts checks every route and method of the template against it.
 */
export const ROUTE_BURST_CEILING = API_GATEWAY_ACCOUNT_THROTTLE.burstLimit / 4;

/**
 * Checks a second the loader routes are planned for, all publishers' buyers together (issue 23's 1,000 a second).
 */
export const LOADER_PLANNED_CHECKS_PER_SECOND = 1_000;

/**
 * Each loader route's throttle on its HTTP API stage, for all clients together (docs/loader.md, "Sizing the route's
 * throttle"). An HTTP API cannot limit one address before Lambda, so past the throttle a flood and the buyers share
 * what it admits in proportion to what they send: one address takes (A / (A + H)) of the route. The rate leaves
 * 1,500 a second above the planned 1,000, so one host must send 90,000 requests a minute (37 times the 2,400 a
 * minute the function admits from one address) before any buyer meets a 429; what it sends below that reaches the
 * function, which refuses the address in memory at about a millisecond a request, with no DynamoDB request, inside
 * the reserved 100 instances (2,500 a second at 1 ms is 2.5 instances). What every route at its throttle adds up to
 * across the Region is ACCOUNT_API_RATE's. Its burst is ROUTE_BURST_CEILING: 1,250 arrivals at one instant, more
 * than a second of the planned checks, refilled at the rate.
 */
export const LOADER_ROUTE_THROTTLE = { rateLimit: 2_500, burstLimit: ROUTE_BURST_CEILING } as const satisfies TokenBucket;

/**
 * The hosted stub (`GET /v1/loader/stub/{project_id}`): fetched once per buyer run, before the script, so sized at
 * the planned runs a second (the front door keeps a known project's stub, so most runs never reach it). A known
 * project's stub is never limited per address; an unknown project's is, past UNSIGNED_REFUSALS a minute, and an
 * unknown id asked again costs no read (UNKNOWN_PROJECTS); a flood past the rate is refused by API Gateway before
 * any function runs. Its burst, a second of those runs, stays under ROUTE_BURST_CEILING.
 */
export const STUB_ROUTE_THROTTLE = {
  rateLimit: LOADER_PLANNED_CHECKS_PER_SECOND,
  burstLimit: LOADER_PLANNED_CHECKS_PER_SECOND,
} as const satisfies TokenBucket;

/**
 * Discord's interactions: people typing commands, a few a second at a busy server's launch. One bucket for every
 * project: an HTTP API throttles a route, never a value of its path (route settings are keyed by route key, and HTTP
 * APIs have no usage plans), so `{project_id}` cannot have a bucket of its own. A flood on one project therefore
 * takes every project's interactions once it passes the rate, so the rate is sized for one flooding host, not for
 * Discord: a host at the front door's per-address limit (WAF_DEFAULT_REQUESTS_PER_MINUTE, with `-c waf=true`) takes
 * at most a tenth of it. What reaches the function from one address past UNSIGNED_REFUSALS a minute is a 429 from
 * memory (no read for a project whose link it read in the last LINK_MEMORY seconds), about a millisecond each: the
 * whole rate is half an instance of the 10 reserved. Without the WAF, one host sending more than the rate takes the
 * route until it stops (docs/security.md, known limits).
 */
export const DISCORD_ROUTE_THROTTLE = { rateLimit: 500, burstLimit: 1_000 } as const satisfies TokenBucket;

/**
 * Shops' webhooks (`POST /v1/shops/{connection_id}`): one request per order item and event, a few a second at a
 * big sale's launch; SellAuth retries a refused one twice 5 s later, Stripe for days.
 */
export const SHOP_ROUTE_THROTTLE = { rateLimit: 20, burstLimit: 40 } as const satisfies TokenBucket;

/**
 * Each route of the free keys' key page (`/v1/free/{project_id}`, its return and Lootlabs' postback): a buyer's
 * browser loads it once per checkpoint, and a flood of made-up sessions stops at its per-address and per-machine
 * limits (FREE_SESSION_LIMITS); the rate bounds what the three routes add to the account's requests a second.
 */
export const FREE_KEY_ROUTE_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const satisfies TokenBucket;

/**
 * API Gateway's requests a second per account and Region, across every API. The default is 10,000; every route at
 * its throttle makes 9 × 500 + 9 × 30 + 2 × 2,500 + 1,000 + 500 + 20 = 11,290, so docs/operations.md asks for `requested` in
 * Service Quotas before a flood could meet the account's throttle instead of a route's.
 */
export const ACCOUNT_API_RATE = { default: 10_000, requested: 12_000 } as const;

/** The 13 Regions where the account's API Gateway throttle starts at a quarter (API_GATEWAY_ACCOUNT_THROTTLE's page). */
export const LOW_API_GATEWAY_THROTTLE = {
  rateLimit: 2_500,
  burstLimit: 1_250,
  regions: [
    'af-south-1',
    'eu-south-1',
    'ap-southeast-3',
    'me-central-1',
    'ap-south-2',
    'ap-southeast-4',
    'eu-south-2',
    'eu-central-2',
    'il-central-1',
    'ca-west-1',
    'ap-southeast-5',
    'ap-southeast-7',
    'mx-central-1',
  ],
  quotaCode: 'L-8A5B8E43',
} as const;

/**
 * The alarm on the loader routes' 429s: more than this share of requests over two 5-minute periods. An honest
 * loader meets a 429 only past 120 checks a minute of one key, so a few percent is a flood or a mis-sized limit.
 */
export const LOADER_429_ALARM = { percent: 5, periods: 2 } as const;

/** Instances the loader check may run at most, and keeps for itself (see docs/operations.md on reserved concurrency). */
export const LOADER_RESERVED_CONCURRENCY = 100;

/**
 * Every method's default throttle in API Gateway, for all its clients together (the stage's default method setting,
 * which API Gateway applies to each method on its own; the loader check has its own above). No single client can
 * meet it: both numbers are above the usage plan's. 500 requests a second is what a route's reserved instances
 * (RESERVED_CONCURRENCY.route) serve at 120 ms a request, several times a warm handler's time, so past it a client
 * gets API Gateway's clean 429 rather than Lambda's throttling, which API Gateway answers with a 500.
 */
export const STAGE_METHOD_THROTTLE = { rateLimit: 500, burstLimit: 500 } as const satisfies TokenBucket;

/**
 * The throttle of the owner routes marked `capacity: 'quiet'` in lambdas/http/routes.ts (ban, unban, extend, edit a
 * key, read stats, the blacklist): a publisher's hand, a console page or one sale's hook calls them, never a fleet.
 * Under a tenth of a busy route's rate and reservation (RESERVED_CONCURRENCY.quietRoute: 30 a second at 120 ms is 3.6
 * instances; it was 50 and 6 until the blacklist's three routes, the leak trace and the shops' receiver made the 900
 * reservable instances too few), so they fit beside the others
 * inside the account's 10,000 requests a second and 900 reservable instances; rate and burst stay at or above the
 * usage plan's, so a single client still meets its plan first.
 */
export const QUIET_ROUTE_THROTTLE = { rateLimit: 30, burstLimit: 300 } as const satisfies TokenBucket;

/**
 * Lambda's default concurrency per account and Region, and what must stay unreserved for every other function: "You
 * can reserve up to the Unreserved account concurrency value minus 100" (Lambda developer guide, "Configuring
 * reserved concurrency", https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html). New accounts
 * start far lower than 1,000 ("New AWS accounts have reduced concurrency and memory quotas", Lambda quotas,
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), so the stack reserves only what
 * `-c reservableConcurrency` allows (planReservations).
 */
export const ACCOUNT_CONCURRENCY = { total: 1_000, unreservedMinimum: 100 } as const;

/**
 * Instances each function may run at most, and keeps for itself, by group: a flood that fills one group's instances
 * cannot take another's. With the 9 busy owner routes and 9 quiet ones: 9 × 60 + 9 × 4 + 100 + 100 + 10 + 5 + 45 +
 * 20 + 10 + 2 + 2 + 10 + 10 + 5 + 5 = 900 of the account's 1,000 (the 900 a default account may reserve). The stack reserves them only when `-c reservableConcurrency` holds
 * them (planReservations).
 */
export const RESERVED_CONCURRENCY = {
  /** Each owner API route's function: STAGE_METHOD_THROTTLE's 500 a second at 120 ms a request. */
  route: 60,
  /** Each quiet owner route's function: QUIET_ROUTE_THROTTLE's 30 a second at 120 ms a request (3.6 in flight). */
  quietRoute: 4,
  /**
   * Token checks the 30-second cache does not answer. A flood of made-up tokens stops here (as 500s for uncached
   * tokens only: a token checked in the last 30 s is answered from the cache and never reaches the function).
   */
  authorizer: 100,
  loaderCheck: LOADER_RESERVED_CONCURRENCY,
  /** One instance per stream shard (parallelization factor 1); a table of this size has a few shards. */
  fanout: 10,
  /** The delivery event source's maximum concurrency: Discord allows each webhook a few posts a second. */
  delivery: 5,
  /** The loader side's direct invocations of the ingest function. */
  ingest: 45,
  /** The telemetry queue's event source's maximum concurrency, which it must not exceed (see TELEMETRY_MAX_CONCURRENCY). */
  queueIngest: 20,
  /** The counted checks' stream ingest: one instance per stream shard (parallelization factor 1), as the fan-out. */
  streamIngest: 10,
  /** Runs once a day; a retry may overlap a slow run. */
  dailyDetector: 2,
  /** Runs once an hour; a retry may overlap a slow run. */
  alertDigest: 2,
  /**
   * Buyers' Discord commands: people typing, a few a second at a busy server's launch, each answered in tens of
   * milliseconds; held apart from the loader's instances so a flood there never delays a reply Discord waits 3 s for.
   */
  discord: 10,
  /**
   * The free keys' key page: buyers' browsers, a few a second at a script's launch; a return may wait up to
   * PROVIDER_TIMEOUT_MS on a provider, so 10 instances still serve 3 returns a second when every provider is slow.
   */
  freeKeys: 10,
  /** The console's API: a few publishers' pages at a time (its own limit is 600 requests a minute per session). */
  console: 5,
  /**
   * Shops' webhooks: SHOP_ROUTE_THROTTLE's 20 a second at about 150 ms an answer (a few DynamoDB writes) is 3 in
   * flight; held apart so a loader flood never delays an answer SellAuth shows its buyer within 10 s.
   */
  shops: 5,
} as const;

export type ConcurrencyGroup = keyof typeof RESERVED_CONCURRENCY;

/** How many functions of the stack are in each concurrency group: one per owner route, one of each other. */
export const FUNCTIONS_PER_GROUP: Readonly<Record<ConcurrencyGroup, number>> = {
  route: ROUTES.filter((route) => !isQuiet(route)).length,
  quietRoute: ROUTES.filter(isQuiet).length,
  authorizer: 1,
  loaderCheck: 1,
  fanout: 1,
  delivery: 1,
  ingest: 1,
  queueIngest: 1,
  streamIngest: 1,
  dailyDetector: 1,
  alertDigest: 1,
  discord: 1,
  freeKeys: 1,
  console: 1,
  shops: 1,
};

/**
 * Which groups keep their reservation first when the account cannot hold them all: the loader check (every buyer's
 * run) and the authorizer (every owner request) before the small bounded consumers, then the loader side's ingest,
 * then the owner routes, whose 60 each only matter once the account serves floods (and which the stage's method
 * throttle already caps).
 */
const RESERVATION_PRIORITY = [
  'loaderCheck',
  'authorizer',
  'queueIngest',
  'delivery',
  'fanout',
  'streamIngest',
  'dailyDetector',
  'alertDigest',
  'discord',
  'shops',
  'freeKeys',
  'console',
  'ingest',
  'quietRoute',
  'route',
] as const satisfies readonly ConcurrencyGroup[];

/** What the stack reserves: each group whole or not at all, so an event source is never capped above its function. */
export interface ReservationPlan {
  reserved: ConcurrencyGroup[];
  unreserved: ConcurrencyGroup[];
  /** Instances reserved in all. */
  total: number;
  /** What every group together would reserve. */
  full: number;
}

/**
 * The groups to reserve when the stack may reserve `reservable` instances in all (the account's unreserved
 * concurrency, plus what this stack already holds, minus the 100 Lambda keeps): RESERVATION_PRIORITY's groups in
 * order, each whole if it still fits. 0 reserves nothing, and every function draws on the account's shared pool.
 */
export function planReservations(functionsPerGroup: Readonly<Record<ConcurrencyGroup, number>>, reservable: number): ReservationPlan {
  const sizeOf = (group: ConcurrencyGroup) => functionsPerGroup[group] * RESERVED_CONCURRENCY[group];
  const plan: ReservationPlan = { reserved: [], unreserved: [], total: 0, full: 0 };
  for (const group of RESERVATION_PRIORITY) {
    plan.full += sizeOf(group);
    if (plan.total + sizeOf(group) <= reservable) {
      plan.reserved.push(group);
      plan.total += sizeOf(group);
    } else plan.unreserved.push(group);
  }
  return plan;
}

/**
 * Batches of the telemetry queue ingested at once. An SQS event source polling beyond its function's reservation
 * gets throttled invocations, and each returns its messages to the queue at the price of a receive (8 and they are
 * in the DLQ), so the source is capped at the reservation.
 */
export const TELEMETRY_MAX_CONCURRENCY = RESERVED_CONCURRENCY.queueIngest;

/**
 * The optional per-address limit in AWS WAF on the front door (`-c waf=true`; `-c wafRateLimit=N` sets N): requests a
 * minute from one viewer IP address over every route. Above the loader check's own 2,400 a minute per address, so an
 * address of buyers that also calls the owner API is refused by the function's limit (the same 429) first.
 */
export const WAF_DEFAULT_REQUESTS_PER_MINUTE = 3_000;
/**
 * The least `-c wafRateLimit` may be: what the loader function itself admits from one address. Lower, WAF would
 * refuse buyers the key check admits; at it, an address of honest buyers behind carrier NAT (the contract's floor,
 * 1,000 checks a minute) keeps more than twice its floor of headroom for WAF's approximate count.
 */
export const WAF_MIN_REQUESTS_PER_MINUTE = LOADER_LIMITS.perAddressPerMinute;

/**
 * WAF's rules on one path each (`-c waf=true`), before the per-address rule over every path:
 * - sign-in (`POST /console/api/session`): 20 a viewer address in 5 minutes. A person signs in once a session; each
 *   try costs a token lookup, and no token is guessable, so more is only a flood.
 * - the hosted stub (`/v1/loader/stub/*`): an address's buyers fetch one stub per run and check their key at least
 *   once per run, so the stub needs no more than the checks the loader admits from one address, whatever
 *   `-c wafRateLimit` allows over every path.
 * WAF counts over 60, 120, 300 or 600 s and takes no limit under 10 ("Rate-based rule statement",
 * https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html).
 */
export const WAF_PATH_RATE_LIMITS = {
  signIn: { method: 'POST', path: '/console/api/session', requests: 20, windowSeconds: 300 },
  stub: { pathPrefix: '/v1/loader/stub/', requests: LOADER_LIMITS.perAddressPerMinute, windowSeconds: 60 },
} as const;
