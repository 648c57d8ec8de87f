import { fileURLToPath } from 'node:url';
import { MAX_KEYS_PER_DASHBOARD_ISSUE } from '#dashboard/commands/input';
import { GRANULARITY, TOP_NAMES } from '#domain/analytics/stats';
import { BLACKLIST_LIMITS } from '#domain/blacklist';
import { CONSOLE_RATE_LIMIT, MAX_SESSIONS_PER_TOKEN, SESSION_IDLE_SECONDS, SESSION_MAX_SECONDS, SIGN_IN_FAILURE_LIMIT } from '#domain/console-session';
import { RESET_COOLDOWN_SECONDS } from '#domain/discord/link';
import { SIGNATURE_MAX_SKEW_SECONDS } from '#domain/discord/signature';
import { FREE_SESSION_LIMITS, FREE_SESSION_SECONDS, MIN_CHECKPOINT_SECONDS, PROVIDER_TIMEOUT_MS } from '#domain/free-keys/session';
import { FULL_COPIES_PER_KEY_VERSION_PER_MINUTE } from '#domain/full-copies';
import { PLACES_USED } from '#domain/hidden-mark';
import { ADDRESS_COUNTING, LOADER_LIMITS } from '#domain/key-check';
import { EXPORT_PAGE_KEYS } from '#domain/key-search';
import { MAX_DUMP_BYTES, MAX_KEYS_PER_TRACED_WATERMARK, MAX_TRACED_WATERMARKS } from '#domain/leak-trace';
import { RATE_LIMIT } from '#domain/rate-limit';
import { REFUSAL_MEMORY } from '#domain/refusal-memory';
import { MAX_SCRIPT_BYTES } from '#domain/scripts';
import { ORDER_REPEAT_WINDOW_SECONDS } from '#domain/selling-keys';
import { MAX_SHOP_PRODUCTS } from '#domain/shops/connections';
import { SHOP_LOG_RETENTION_SECONDS } from '#domain/shops/receive';
import { SHOP_SIGNATURE_TOLERANCE_SECONDS } from '#domain/shops/signatures';
import { MAX_KEYS_PER_ORDER_ITEM } from '#domain/shops/terms';
import { AUTHORIZER_CACHE_SECONDS, MAX_TOKENS_PER_OWNER } from '#domain/tokens';
import { UNSIGNED_REFUSALS } from '#domain/unsigned-refusals';
import { LINK_MEMORY } from '#http/discord-interactions';
import { STUB_MAX_AGE_SECONDS, UNKNOWN_PROJECTS } from '#http/loader-stub';
import { MAX_BODY_BYTES } from '#http/middlewares';
import { revokeBulkRoute } from '#http/owner-routes/revoke-bulk';
import { traceLeakRoute } from '#http/owner-routes/trace-leak';
import { API_FUNCTION_TIMEOUT_SECONDS, timeoutSecondsOf } from '#http/routes';
import { MAX_VERSION_NOTES_LENGTH } from '#schemas/console';
import { FREE_SETTINGS_BOUNDS } from '#schemas/free-keys';
import { BAN_REASON_LENGTH, KEYS_PAGE, MAX_FINGERPRINTS, MAX_KEYS_PER_API_ISSUE, MAX_NOTE_LENGTH } from '#schemas/requests';
import {
  ACCOUNT_API_RATE,
  ACCOUNT_CONCURRENCY,
  API_GATEWAY_ACCOUNT_THROTTLE,
  DISCORD_ROUTE_THROTTLE,
  FUNCTIONS_PER_GROUP,
  LOADER_RESERVED_CONCURRENCY,
  LOADER_ROUTE_THROTTLE,
  LOW_API_GATEWAY_THROTTLE,
  QUIET_ROUTE_THROTTLE,
  RESERVED_CONCURRENCY,
  ROUTE_BURST_CEILING,
  SHOP_ROUTE_THROTTLE,
  STAGE_METHOD_THROTTLE,
  STUB_ROUTE_THROTTLE,
  USAGE_PLAN_THROTTLE,
  WAF_DEFAULT_REQUESTS_PER_MINUTE,
  WAF_MIN_REQUESTS_PER_MINUTE,
  WAF_PATH_RATE_LIMITS,
} from './capacity';

/** Where `npm run limits` writes the page. */
export const LIMITS_PATH = fileURLToPath(new URL('../docs/limits.md', import.meta.url));

const number = (value: number): string => value.toLocaleString('en-US');
const hours = (seconds: number): string => `${number(seconds / 3600)} h`;
const days = (seconds: number): string => `${number(seconds / 86_400)} days`;
const bucket = (throttle: { rateLimit: number; burstLimit: number }): string => `${number(throttle.rateLimit)}/s, burst ${number(throttle.burstLimit)}`;
const reservedInAll = Object.entries(RESERVED_CONCURRENCY).reduce(
  (sum, [group, each]) => sum + each * FUNCTIONS_PER_GROUP[group as keyof typeof FUNCTIONS_PER_GROUP],
  0,
);

/** One limit: what it bounds, its value, and the constant that holds it (the only place the number is written). */
type Limit = [what: string, value: string, constant: string];

const SECTIONS: [title: string, limits: Limit[]][] = [
  [
    'Owner API',
    [
      ['Requests per token', `${number(RATE_LIMIT.requests)} per ${RATE_LIMIT.windowSeconds} s`, '`RATE_LIMIT` (lambdas/domain/rate-limit.ts)'],
      ['Keys per page', `default ${KEYS_PAGE.defaultLimit}, at most ${KEYS_PAGE.maxLimit}`, '`KEYS_PAGE` (lambdas/schemas/requests.ts)'],
      ['Keys per issue call', number(MAX_KEYS_PER_API_ISSUE), '`MAX_KEYS_PER_API_ISSUE` (lambdas/schemas/requests.ts)'],
      ['Machines a key may be bound to', number(MAX_FINGERPRINTS), '`MAX_FINGERPRINTS` (lambdas/schemas/requests.ts)'],
      ["A key's note", `${number(MAX_NOTE_LENGTH)} characters`, '`MAX_NOTE_LENGTH` (lambdas/schemas/requests.ts)'],
      ['JSON body', `${MAX_BODY_BYTES / 1024} KB`, '`MAX_BODY_BYTES` (lambdas/http/middlewares.ts)'],
      ["A route function's timeout", `${API_FUNCTION_TIMEOUT_SECONDS} s`, '`API_FUNCTION_TIMEOUT_SECONDS` (lambdas/http/routes.ts)'],
      ["The bulk revoke's timeout", `${timeoutSecondsOf(revokeBulkRoute)} s`, '`timeoutSeconds` (lambdas/http/owner-routes/revoke-bulk.ts)'],
      ["The authorizer's cached answer", `${AUTHORIZER_CACHE_SECONDS} s`, '`AUTHORIZER_CACHE_SECONDS` (lambdas/domain/tokens.ts)'],
      ['Working tokens per owner', number(MAX_TOKENS_PER_OWNER), '`MAX_TOKENS_PER_OWNER` (lambdas/domain/tokens.ts)'],
      ["A ban's reason", `${BAN_REASON_LENGTH.min}–${number(BAN_REASON_LENGTH.max)} characters`, '`BAN_REASON_LENGTH` (lambdas/schemas/requests.ts)'],
      ['Blacklist entries per project', number(BLACKLIST_LIMITS.entriesPerProject), '`BLACKLIST_LIMITS` (lambdas/domain/blacklist.ts)'],
      ['Blacklist entries per page', `default ${KEYS_PAGE.defaultLimit}, at most ${KEYS_PAGE.maxLimit}`, '`KEYS_PAGE` (lambdas/schemas/requests.ts)'],
      ['Keys one blacklisting bans', `at most ${number(BLACKLIST_LIMITS.keysBannedPerEntry)}`, '`BLACKLIST_LIMITS` (lambdas/domain/blacklist.ts)'],
      [
        "An order's repeat window (the same order id answers the same keys)",
        hours(ORDER_REPEAT_WINDOW_SECONDS),
        '`ORDER_REPEAT_WINDOW_SECONDS` (lambdas/domain/selling-keys.ts)',
      ],
      ['A script version', `${number(MAX_SCRIPT_BYTES / 1024 / 1024)} MiB`, '`MAX_SCRIPT_BYTES` (lambdas/domain/scripts.ts)'],
      ['A leaked dump to trace', `1 byte to ${number(MAX_DUMP_BYTES / 1024 / 1024)} MiB`, '`MAX_DUMP_BYTES` (lambdas/domain/leak-trace.ts)'],
      ['Watermarks one trace answers, with their keys', number(MAX_TRACED_WATERMARKS), '`MAX_TRACED_WATERMARKS` (lambdas/domain/leak-trace.ts)'],
      ['Keys listed per traced watermark', number(MAX_KEYS_PER_TRACED_WATERMARK), '`MAX_KEYS_PER_TRACED_WATERMARK`'],
      ["The trace's timeout", `${timeoutSecondsOf(traceLeakRoute)} s`, '`timeoutSeconds` (lambdas/http/owner-routes/trace-leak.ts)'],
      [
        'Places the hidden mark uses in one version',
        `at most ${number(PLACES_USED)} (a longer script uses a hashed share of its places)`,
        '`PLACES_USED` (lambdas/domain/hidden-mark.ts)',
      ],
      [
        'Stats window, by hour',
        `${GRANULARITY.hour.limit}, kept ${days(GRANULARITY.hour.keptSeconds)}`,
        '`GRANULARITY.hour` (lambdas/domain/analytics/stats.ts)',
      ],
      ['Stats window, by day', `${GRANULARITY.day.limit}, kept ${days(GRANULARITY.day.keptSeconds)}`, '`GRANULARITY.day`'],
      ['Executors or versions named per stats bucket', `${TOP_NAMES}, the rest summed`, '`TOP_NAMES` (lambdas/domain/analytics/stats.ts)'],
    ],
  ],
  [
    'Loader routes',
    [
      ['Checks per key', `${number(LOADER_LIMITS.perKeyPerMinute)} a minute`, '`LOADER_LIMITS.perKeyPerMinute` (lambdas/domain/key-check.ts)'],
      ['Checks per address (IPv6: per /64)', `${number(LOADER_LIMITS.perAddressPerMinute)} a minute`, '`LOADER_LIMITS.perAddressPerMinute`'],
      ['Unknown keys per address', `${number(ADDRESS_COUNTING.invalidKeysPerMinute)} a minute`, '`ADDRESS_COUNTING.invalidKeysPerMinute`'],
      ['Checks of an address a container counts alone', `${number(ADDRESS_COUNTING.sharedAfter)} a minute`, '`ADDRESS_COUNTING.sharedAfter`'],
      [
        'HTTP API throttle, each route',
        `${number(LOADER_ROUTE_THROTTLE.rateLimit)}/s, burst ${number(LOADER_ROUTE_THROTTLE.burstLimit)}`,
        '`LOADER_ROUTE_THROTTLE` (lib/capacity.ts)',
      ],
      [
        'Full copies of one version per key',
        `${FULL_COPIES_PER_KEY_VERSION_PER_MINUTE} a minute`,
        '`FULL_COPIES_PER_KEY_VERSION_PER_MINUTE` (lambdas/domain/full-copies.ts)',
      ],
      [
        "A revoked key's refusals written before a container answers them from memory",
        `${REFUSAL_MEMORY.floor} a minute`,
        '`REFUSAL_MEMORY.floor` (lambdas/domain/refusal-memory.ts)',
      ],
      ['The hosted stub in caches', `${STUB_MAX_AGE_SECONDS} s`, '`STUB_MAX_AGE_SECONDS` (lambdas/http/loader-stub.ts)'],
      ['HTTP API throttle, the stub route', bucket(STUB_ROUTE_THROTTLE), '`STUB_ROUTE_THROTTLE` (lib/capacity.ts)'],
      [
        'Stubs of unknown projects and Discord interactions whose signature fails, per address (IPv6: per /64); then 429',
        `${number(UNSIGNED_REFUSALS.perAddressPerMinute)} a minute`,
        '`UNSIGNED_REFUSALS.perAddressPerMinute` (lambdas/domain/unsigned-refusals.ts)',
      ],
      ['Of those, counted by a container alone', `${number(UNSIGNED_REFUSALS.sharedAfter)} a minute`, '`UNSIGNED_REFUSALS.sharedAfter`'],
      [
        'An unknown project id remembered by a container (no read when asked again)',
        `${UNKNOWN_PROJECTS.seconds} s, at most ${number(UNKNOWN_PROJECTS.kept)} ids`,
        '`UNKNOWN_PROJECTS` (lambdas/http/loader-stub.ts)',
      ],
      ["The loader function's reserved concurrency", number(LOADER_RESERVED_CONCURRENCY), '`LOADER_RESERVED_CONCURRENCY` (lib/capacity.ts)'],
    ],
  ],
  [
    'Console',
    [
      [
        'Requests per session',
        `${number(CONSOLE_RATE_LIMIT.requests)} per ${CONSOLE_RATE_LIMIT.windowSeconds} s`,
        '`CONSOLE_RATE_LIMIT` (lambdas/domain/console-session.ts)',
      ],
      ['A session unused', `ends after ${hours(SESSION_IDLE_SECONDS)}`, '`SESSION_IDLE_SECONDS`'],
      ['A session at most', days(SESSION_MAX_SECONDS), '`SESSION_MAX_SECONDS`'],
      [
        'Failed sign-ins per client address (past them every sign-in waits for the next window)',
        `${number(SIGN_IN_FAILURE_LIMIT.requests)} per ${SIGN_IN_FAILURE_LIMIT.windowSeconds} s`,
        '`SIGN_IN_FAILURE_LIMIT` (lambdas/domain/console-session.ts)',
      ],
      ['Keys per page of the CSV export', number(EXPORT_PAGE_KEYS), '`EXPORT_PAGE_KEYS` (lambdas/domain/key-search.ts)'],
      ['Live sessions per token (another ends the oldest)', number(MAX_SESSIONS_PER_TOKEN), '`MAX_SESSIONS_PER_TOKEN` (lambdas/domain/console-session.ts)'],
    ],
  ],
  [
    'Discord',
    [
      ['HTTP API throttle, the interactions route', bucket(DISCORD_ROUTE_THROTTLE), '`DISCORD_ROUTE_THROTTLE` (lib/capacity.ts)'],
      [
        "A buyer's machine reset cooldown",
        `${hours(RESET_COOLDOWN_SECONDS.default)} by default, ${hours(RESET_COOLDOWN_SECONDS.min)} to ${days(RESET_COOLDOWN_SECONDS.max)}`,
        '`RESET_COOLDOWN_SECONDS` (lambdas/domain/discord/link.ts)',
      ],
      ["A signed interaction's age", `${SIGNATURE_MAX_SKEW_SECONDS} s`, '`SIGNATURE_MAX_SKEW_SECONDS` (lambdas/domain/discord/signature.ts)'],
      [
        'A link read that refuses an address past its refusals with no read',
        `${LINK_MEMORY.seconds} s, at most ${number(LINK_MEMORY.kept)} projects`,
        '`LINK_MEMORY` (lambdas/http/discord-interactions.ts)',
      ],
    ],
  ],
  [
    'Shops',
    [
      ['HTTP API throttle, the receiver route', bucket(SHOP_ROUTE_THROTTLE), '`SHOP_ROUTE_THROTTLE` (lib/capacity.ts)'],
      [
        "A shop's signed timestamp (SellAuth, Stripe)",
        `${SHOP_SIGNATURE_TOLERANCE_SECONDS} s from now`,
        '`SHOP_SIGNATURE_TOLERANCE_SECONDS` (lambdas/domain/shops/signatures.ts)',
      ],
      [
        'Keys one order item issues (quantity × keys per unit)',
        `at most ${MAX_KEYS_PER_ORDER_ITEM}`,
        '`MAX_KEYS_PER_ORDER_ITEM` (lambdas/domain/shops/terms.ts)',
      ],
      ['Products mapped per connection', `at most ${MAX_SHOP_PRODUCTS}`, '`MAX_SHOP_PRODUCTS` (lambdas/domain/shops/connections.ts)'],
      ['The delivery log', `kept ${days(SHOP_LOG_RETENTION_SECONDS)}`, '`SHOP_LOG_RETENTION_SECONDS` (lambdas/domain/shops/receive.ts)'],
    ],
  ],
  [
    'Free keys',
    [
      [
        'Checkpoints of a project',
        `${FREE_SETTINGS_BOUNDS.checkpoints.min} to ${FREE_SETTINGS_BOUNDS.checkpoints.max}`,
        '`FREE_SETTINGS_BOUNDS` (lambdas/schemas/free-keys.ts)',
      ],
      [
        "A free key's duration",
        `${FREE_SETTINGS_BOUNDS.durationHours.min} to ${FREE_SETTINGS_BOUNDS.durationHours.max} h, ${FREE_SETTINGS_BOUNDS.durationHours.default} h by default`,
        '`FREE_SETTINGS_BOUNDS.durationHours`',
      ],
      [
        "A free key's machines",
        `${FREE_SETTINGS_BOUNDS.machines.min} to ${FREE_SETTINGS_BOUNDS.machines.max}, ${FREE_SETTINGS_BOUNDS.machines.default} by default`,
        '`FREE_SETTINGS_BOUNDS.machines`',
      ],
      [
        'Free keys per machine per UTC day',
        `${FREE_SETTINGS_BOUNDS.keysPerMachinePerDay.min} to ${FREE_SETTINGS_BOUNDS.keysPerMachinePerDay.max}, ${FREE_SETTINGS_BOUNDS.keysPerMachinePerDay.default} by default`,
        '`FREE_SETTINGS_BOUNDS.keysPerMachinePerDay`',
      ],
      [
        'Sessions started per client address, per project',
        `${number(FREE_SESSION_LIMITS.perAddressPerHour)} an hour`,
        '`FREE_SESSION_LIMITS` (lambdas/domain/free-keys/session.ts)',
      ],
      ['Sessions started per machine, per project', `${number(FREE_SESSION_LIMITS.perMachinePerHour)} an hour`, '`FREE_SESSION_LIMITS`'],
      ['A session lives', hours(FREE_SESSION_SECONDS), '`FREE_SESSION_SECONDS`'],
      ['Least time on a checkpoint before its return is taken', `${MIN_CHECKPOINT_SECONDS.workink} s (every provider)`, '`MIN_CHECKPOINT_SECONDS`'],
      ["A provider's verification call", `${number(PROVIDER_TIMEOUT_MS)} ms, then the page says the provider is down`, '`PROVIDER_TIMEOUT_MS`'],
    ],
  ],
  [
    'API Gateway (owner API)',
    [
      [
        'Usage plan, per token',
        `${number(USAGE_PLAN_THROTTLE.rateLimit)}/s, burst ${number(USAGE_PLAN_THROTTLE.burstLimit)}`,
        '`USAGE_PLAN_THROTTLE` (lib/capacity.ts)',
      ],
      [
        'Each method',
        `${number(STAGE_METHOD_THROTTLE.rateLimit)}/s, burst ${number(STAGE_METHOD_THROTTLE.burstLimit)}`,
        '`STAGE_METHOD_THROTTLE` (lib/capacity.ts)',
      ],
      ['Each quiet method (ban, unban, extend, edit, stats)', bucket(QUIET_ROUTE_THROTTLE), '`QUIET_ROUTE_THROTTLE` (lib/capacity.ts)'],
      [
        "The account's API Gateway requests a second (default, and what docs/operations.md asks for)",
        `${number(ACCOUNT_API_RATE.default)}, ask for ${number(ACCOUNT_API_RATE.requested)}`,
        '`ACCOUNT_API_RATE` (lib/capacity.ts)',
      ],
      [
        "Any route's or method's burst: a quarter of the account's API Gateway burst, which no quota request raises",
        `${number(ROUTE_BURST_CEILING)} (of ${number(API_GATEWAY_ACCOUNT_THROTTLE.burstLimit)})`,
        '`ROUTE_BURST_CEILING` (lib/capacity.ts)',
      ],
      [
        `The account's API Gateway requests a second in the ${LOW_API_GATEWAY_THROTTLE.regions.length} Regions where it starts lower`,
        bucket(LOW_API_GATEWAY_THROTTLE),
        '`LOW_API_GATEWAY_THROTTLE` (lib/capacity.ts)',
      ],
      [
        "The account's Lambda concurrency the stack plans for (AWS's default)",
        `${number(ACCOUNT_CONCURRENCY.total)}, of which Lambda keeps ${number(ACCOUNT_CONCURRENCY.unreservedMinimum)} unreserved`,
        '`ACCOUNT_CONCURRENCY` (lib/capacity.ts)',
      ],
      ['Reserved concurrency, every group reserved', `${number(reservedInAll)} instances`, '`RESERVED_CONCURRENCY`, `FUNCTIONS_PER_GROUP` (lib/capacity.ts)'],
      [
        'WAF per-address rule (opt-in, `-c wafRateLimit`)',
        `${number(WAF_DEFAULT_REQUESTS_PER_MINUTE)} a minute by default`,
        '`WAF_DEFAULT_REQUESTS_PER_MINUTE` (lib/capacity.ts)',
      ],
      [
        'WAF per-address rule, the lowest `-c wafRateLimit` (what the loader admits from one address)',
        `${number(WAF_MIN_REQUESTS_PER_MINUTE)} a minute`,
        '`WAF_MIN_REQUESTS_PER_MINUTE` (lib/capacity.ts)',
      ],
      [
        'WAF sign-in rule (`POST /console/api/session`), per address',
        `${WAF_PATH_RATE_LIMITS.signIn.requests} in ${WAF_PATH_RATE_LIMITS.signIn.windowSeconds / 60} minutes`,
        '`WAF_PATH_RATE_LIMITS.signIn` (lib/capacity.ts)',
      ],
      [
        'WAF hosted-stub rule (`/v1/loader/stub/*`), per address',
        `${number(WAF_PATH_RATE_LIMITS.stub.requests)} a minute`,
        '`WAF_PATH_RATE_LIMITS.stub` (lib/capacity.ts)',
      ],
    ],
  ],
  [
    'Dashboard CLI',
    [
      ['Keys per `keys issue`', number(MAX_KEYS_PER_DASHBOARD_ISSUE), '`MAX_KEYS_PER_DASHBOARD_ISSUE` (dashboard/commands/input.ts)'],
      [
        "A version's notes",
        `${number(MAX_VERSION_NOTES_LENGTH)} characters`,
        '`MAX_VERSION_NOTES_LENGTH` (lambdas/schemas/console.ts; the dashboard and the console)',
      ],
    ],
  ],
];

/** docs/limits.md: every limit in one table per part, generated from the constants so the page cannot drift. */
export function limitsDocument(): string {
  const sections = SECTIONS.map(
    ([title, limits]) => `## ${title}\n\n| Limit | Value | Constant |\n| --- | --- | --- |\n${limits.map((limit) => `| ${limit.join(' | ')} |`).join('\n')}\n`,
  );
  return `# Limits\n\n<!-- Generated by \`npm run limits\` from the constants named below; a unit test fails while it is stale. -->\n\nThe numbers other pages explain; each is written once, in the constant beside it.\n\n${sections.join('\n')}`;
}
