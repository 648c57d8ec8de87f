import { ALERTS_PER_HOUR, NEW_EXECUTORS_PER_KEY_PER_HOUR, NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR } from '#domain/analytics/alert-budget';
import {
  type EventData,
  type EventDigest,
  type EventSummary,
  isDigest,
  isSummary,
  type ProjectEvent,
  type SingleEventData,
  type SummarizedEventName,
} from '#schemas/events';
import { UNSAFE_TEXT_CHARACTERS_GLOBAL } from '#schemas/formats';
import type { EventName } from '#schemas/resources';

/**
 * The Discord embeds the service posts (spec §6.2): one pure builder per event. Every embed carries the
 * spec's shape: title, color, a description `**<script name>** (<script id>)`, fields, an ISO 8601 UTC
 * timestamp with milliseconds and a fixed footer. The script name is the project's name, the script id its id.
 */

interface EmbedField {
  name: string;
  value: string;
  inline: boolean;
}

export interface Embed {
  title: string;
  description: string;
  color: number;
  fields: EmbedField[];
  timestamp: string;
  footer: { text: string };
}

/**
 * What is posted to Discord: `{"embeds": [...], "allowed_mentions": {"parse": []}}`. The empty `parse` list
 * lets no text of the message ping anyone (`@everyone`, `@here`, a user or a role), whatever reaches it.
 */
export interface EmbedMessage {
  embeds: Embed[];
  allowed_mentions: { parse: [] };
}

/** Discord's embed limits, in characters; this module counts them in Unicode code points. */
export const EMBED_LIMITS = {
  title: 256,
  description: 4096,
  fieldName: 256,
  fieldValue: 1024,
  fields: 25,
  footerText: 2048,
  /** Title, description, field names and values and footer text together. */
  total: 6000,
} as const;

/**
 * Spec §6.2 fixes the deploy color (2278116 = #22C2E4); the others are this service's choice, in the hues the
 * spec names: red #ED4245 (Discord's red), blue #3498DB, amber #F59E0B, purple #9B59B6.
 */
export const EMBED_COLORS: Record<EventName, number> = {
  version_deployed: 2278116,
  execution_drop: 0xed4245,
  new_executor: 0x3498db,
  key_abuse: 0xf59e0b,
  clone_detected: 0x9b59b6,
};

export const FOOTER_TEXT = 'Script Distribution';
/** Discord refuses an empty field value, so empty notes show as this. */
export const EMPTY_NOTES = '_No notes_';
const ELLIPSIS = '…';

export const codePointLength = (text: string): number => [...text].length;

/** `text` cut to at most `max` code points, ending in "…" when it was cut (never splitting a surrogate pair). */
export function truncate(text: string, max: number): string {
  const points = [...text];
  if (points.length <= max) return text;
  return points.slice(0, Math.max(0, max - 1)).join('') + ELLIPSIS;
}

/**
 * Characters that make Discord markup wherever they stand: emphasis, underline, strike, code, spoilers, quotes,
 * masked links (`[`), mentions and channel, role or emoji references (`<`, `@`), headings and subtext (`#`), and
 * the `:` of a URL's scheme (Discord links a bare `https://…` by itself; with the colon escaped it stays text).
 */
const MARKDOWN_SPECIAL = /[\\*_`~|>[\]<#@:]/;
/** A list item's marker at the start of a line (`- `, `+ `, `1. `): its last character gets the backslash. */
const LIST_MARKER = /^(\s*)([-+]|\d+\.)(?=\s|$)/;
/** What stands for a character that would reorder or hide text (see UNSAFE_TEXT_CHARACTERS). */
const REPLACEMENT = '\uFFFD';

/**
 * User text made inert as Discord markdown, at most `max` code points long: markdown characters get a
 * backslash, a list marker at the start gets one too, line breaks become spaces (with `keepLines`, each line
 * is escaped on its own), and control and bidirectional-override characters become U+FFFD. So a name can
 * neither close the bold around it nor make a heading, a list, a quote, a spoiler, a code span, a link, a
 * masked link or a mention, nor reorder what follows it. Cutting happens between escapes, never inside one.
 */
export function escapeMarkdown(text: string, max: number = Number.POSITIVE_INFINITY, options: { keepLines?: boolean } = {}): string {
  const lines = text.split(/\r\n|\r|\n/);
  if (options.keepLines && lines.length > 1)
    return cutEscaped(
      lines.flatMap((line, i) => [...(i > 0 ? ['\n'] : []), ...escapePoints(line)]),
      max,
    );
  return cutEscaped(escapePoints(lines.join(' ')), max);
}

/** One line's code points, each escaped as escapeMarkdown says. */
function escapePoints(line: string): string[] {
  const points = [...line.replace(/\t/g, ' ').replace(UNSAFE_TEXT_CHARACTERS_GLOBAL, REPLACEMENT)].map((point) =>
    MARKDOWN_SPECIAL.test(point) ? `\\${point}` : point,
  );
  const marker = LIST_MARKER.exec(line);
  if (marker) {
    const at = [...(marker[1] ?? '')].length + [...(marker[2] ?? '')].length - 1;
    points[at] = `\\${points[at] ?? ''}`;
  }
  return points;
}

/** Escaped pieces joined, cut to `max` code points with "…" between pieces, never inside one. */
function cutEscaped(escaped: readonly string[], max: number): string {
  let out = '';
  let length = 0;
  for (let i = 0; i < escaped.length; i++) {
    const piece = escaped[i] as string;
    const pieceLength = codePointLength(piece);
    const reserve = i < escaped.length - 1 ? 1 : 0;
    if (length + pieceLength + reserve > max) return out + ELLIPSIS;
    out += piece;
    length += pieceLength;
  }
  return out;
}

/** Ids this service makes (`prj_` + hex) hold one underscore, which cannot open emphasis; anything else is escaped. */
const SIMPLE_ID = /^[A-Za-z0-9-]*_?[A-Za-z0-9-]*$/;
const ID_MAX = 128;

/**
 * `**<name>** (<id>)` within `max` code points (callers leave it thousands). The name gives way, so the bold
 * markers and the id always survive; an empty name shows as "Unnamed script" rather than as a bare `****`.
 */
function scriptLine(name: string, id: string, max: number): string {
  const idText = SIMPLE_ID.test(id) ? truncate(id, ID_MAX) : escapeMarkdown(id, ID_MAX);
  const nameBudget = max - codePointLength(`**** (${idText})`);
  return `**${escapeMarkdown(name.trim() === '' ? 'Unnamed script' : name, nameBudget)}** (${idText})`;
}

const fieldOf = (name: string, value: string, inline: boolean, empty = '—'): EmbedField => ({
  name: truncate(name, EMBED_LIMITS.fieldName),
  value: truncate(value.trim() === '' ? empty : value, EMBED_LIMITS.fieldValue),
  inline,
});

/**
 * Telemetry strings (executor names, key ids, hashes) are cut to this in field values, so the fields of any
 * embed stay far below the total and the description always keeps thousands of code points.
 */
const SHORT_VALUE = 256;

const counts = new Intl.NumberFormat('en-US');
const formatCount = (n: number) => counts.format(n);

/** Sizes in KB of 1024 bytes with one decimal: 12595 bytes → "12.3 KB". */
export const formatKilobytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/** "2023-11-14 22:13 UTC": readable in a field, unlike a raw Unix timestamp. */
export const formatUtc = (unixSeconds: number): string => `${new Date(unixSeconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function formatDuration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** A list, one item a line, that fits a field value: what does not fit is counted instead of cut mid-item. */
function listWithin(items: string[], max: number): string {
  const lines: string[] = [];
  let length = 0;
  for (const [i, item] of items.entries()) {
    const rest = items.length - i;
    const line = truncate(item, max);
    const more = `… and ${rest - 1} more`;
    const needed = length + codePointLength(line) + (lines.length > 0 ? 1 : 0);
    const reserve = rest > 1 ? codePointLength(more) + 1 : 0;
    if (needed + reserve > max) {
      lines.push(`… and ${rest} more`);
      break;
    }
    lines.push(line);
    length = needed;
  }
  return lines.join('\n');
}

/** What an event's builder decides; the shared frame (description, color, timestamp, footer, limits) is added around it. */
interface EmbedBody {
  title: string;
  fields: EmbedField[];
}

/** Builders of one occurrence of each event; a summary of many is built from SUMMARY_TEXT instead. */
type Builders = { [E in EventName]: (data: E extends SummarizedEventName ? SingleEventData<E> : EventData<E>) => EmbedBody };

const KEY_ABUSE_TEXT = {
  many_fingerprints: {
    label: 'Key used from many devices',
    unit: 'distinct devices',
    advice:
      'The key is probably shared or leaked. Revoke it (POST /v1/projects/:id/keys/revoke with its key_id); if it shows in a leaked dump, revoke every key with its watermark (keys/revoke-bulk).',
  },
  revoked_key_burst: {
    label: 'Revoked key still being tried',
    unit: 'validations',
    advice: 'Someone keeps a copy with this revoked key. The key stays refused; find where the copy leaked and revoke its watermark if other keys share it.',
  },
  banned_key_burst: {
    label: 'Banned key still being tried',
    unit: 'validations',
    advice:
      'The key is banned and keeps being tried: its buyer did not read the reason, or a copy circulates. The ban holds; revoke the key (keys/revoke) if it is shared.',
  },
  expired_key_burst: {
    label: 'Expired key still being tried',
    unit: 'validations',
    advice: 'Someone keeps retrying an expired key. Issue the user a fresh key if they are legitimate; otherwise a copy with this key is circulating.',
  },
  over_max_uses: {
    label: 'Use cap exceeded',
    unit: 'uses',
    advice: 'The key went past its use cap. Revoke it if the uses are not the user’s, or issue a new key if the cap was too low.',
  },
  hwid_locked_burst: {
    label: 'Machine-bound key tried on other machines',
    unit: 'locked checks',
    advice:
      'The key is bound to its machines and keeps being tried on others: shared, or its buyer changed machine or executor. Reset it (POST /v1/projects/:id/keys/reset-hwid) if the buyer asks; revoke it if it is shared.',
  },
} as const;

const EMBED_BUILDERS: Builders = {
  version_deployed: (data) => ({
    title: 'New version deployed',
    fields: [
      fieldOf('Version', `v${data.versionNumber}`, true),
      fieldOf('Size', formatKilobytes(data.sizeBytes), true),
      fieldOf('Notes', escapeMarkdown(data.notes, EMBED_LIMITS.fieldValue, { keepLines: true }), true, EMPTY_NOTES),
    ],
  }),

  execution_drop: (data) => ({
    title: `Executions fell ${data.dropPercent.toFixed(1)} % day over day`,
    fields: [
      fieldOf('Day (UTC)', data.date, true),
      fieldOf('Executions', formatCount(data.executions), true),
      fieldOf('Day before', formatCount(data.previousExecutions), true),
      fieldOf('Drop', `${data.dropPercent.toFixed(1)} %`, true),
      fieldOf(
        'What to do',
        'Check whether the current version fails on load (roll back with POST /v1/projects/:id/versions/rollback) and whether valid keys stopped validating.',
        false,
      ),
    ],
  }),

  new_executor: (data) => ({
    title: 'New executor seen',
    fields: [
      fieldOf('Executor', escapeMarkdown(data.executor, SHORT_VALUE), true),
      fieldOf('First seen', formatUtc(data.firstSeenAt), true),
      fieldOf('Seen before', data.previouslySeenAt === null ? 'never' : formatUtc(data.previouslySeenAt), true),
      fieldOf(
        'What to do',
        'The script ran on an executor it had not seen in the prior 7 days. Check that your script supports it; if nobody should run it there, look for leaked keys.',
        false,
      ),
    ],
  }),

  key_abuse: (data) => {
    const text = KEY_ABUSE_TEXT[data.pattern];
    return {
      title: `Suspicious key use: ${text.label}`,
      fields: [
        fieldOf('Key', escapeMarkdown(data.keyId, SHORT_VALUE), true),
        fieldOf('Seen', `${formatCount(data.count)} ${text.unit} in ${formatDuration(data.windowSeconds)}`, true),
        fieldOf('Threshold', formatCount(data.threshold), true),
        fieldOf('What to do', text.advice, false),
      ],
    };
  },

  clone_detected: (data) => ({
    title: 'Possible clone detected',
    fields: [
      fieldOf('Script', escapeMarkdown(data.scriptId, SHORT_VALUE), true),
      fieldOf('Version', data.versionId === null ? 'unknown' : escapeMarkdown(data.versionId, SHORT_VALUE), true),
      fieldOf('Distinct hashes', formatCount(data.distinctHashes), true),
      fieldOf('New hash', escapeMarkdown(data.newHash, SHORT_VALUE), false),
      fieldOf('Original hash', escapeMarkdown(data.originalHash, SHORT_VALUE), false),
      fieldOf(
        data.distinctHashes > data.sampleHashes.length ? `Sample (${formatCount(data.sampleHashes.length)} of ${formatCount(data.distinctHashes)})` : 'Hashes',
        listWithin(
          data.sampleHashes.map((hash) => escapeMarkdown(hash, SHORT_VALUE)),
          EMBED_LIMITS.fieldValue,
        ),
        false,
      ),
      fieldOf(
        'What to do',
        'A modified copy of the script is running under the same script id. Compare the hashes with your builds; if a copy leaked, revoke its keys by watermark.',
        false,
      ),
    ],
  }),
};

/** How a summary of many events of one kind reads: its title, one line per sampled event, and what to do. */
const SUMMARY_TEXT: {
  [E in SummarizedEventName]: { title: (count: string) => string; noun: string; line: (data: SingleEventData<E>) => string; advice: string };
} = {
  new_executor: {
    title: (count) => `${count} new executors seen`,
    noun: 'new executors',
    line: (data) => `${escapeMarkdown(data.executor, SHORT_VALUE)} (first seen ${formatUtc(data.firstSeenAt)})`,
    advice:
      'The script ran on this many executors it had not seen in the prior 7 days, all reported at once. A jump like this usually means the script or a key leaked: look at the keys these runs validated with and revoke what is not yours.',
  },
  key_abuse: {
    title: (count) => `Suspicious use of ${count} keys`,
    noun: 'suspicious key uses',
    line: (data) =>
      `${escapeMarkdown(data.keyId, SHORT_VALUE)}: ${KEY_ABUSE_TEXT[data.pattern].label} (${formatCount(data.count)} ${KEY_ABUSE_TEXT[data.pattern].unit})`,
    advice:
      'Many keys tripped the abuse checks at once, as a leaked dump or a cracked loader makes them do. Revoke the keys listed (keys/revoke), or every key of a leaked watermark (keys/revoke-bulk).',
  },
  clone_detected: {
    title: (count) => `${count} possible clones detected`,
    noun: 'possible clones',
    line: (data) =>
      `${escapeMarkdown(data.newHash, SHORT_VALUE)} (script ${escapeMarkdown(data.scriptId, SHORT_VALUE)}${data.versionId === null ? '' : `, ${escapeMarkdown(data.versionId, SHORT_VALUE)}`})`,
    advice: 'Many modified copies of the script started running at once. Compare the hashes with your builds; if a copy leaked, revoke its keys by watermark.',
  },
};

function summaryBody<E extends SummarizedEventName>(name: E, summary: EventSummary<E>): EmbedBody {
  const text = SUMMARY_TEXT[name];
  const shown = summary.sample.length < summary.count ? `Sample (${formatCount(summary.sample.length)} of ${formatCount(summary.count)})` : 'All';
  return {
    title: text.title(formatCount(summary.count)),
    fields: [
      fieldOf('Count', formatCount(summary.count), true),
      fieldOf('First', formatUtc(summary.firstAt), true),
      fieldOf('Last', formatUtc(summary.lastAt), true),
      fieldOf(shown, listWithin(summary.sample.map(text.line), EMBED_LIMITS.fieldValue), false),
      fieldOf('What to do', text.advice, false),
    ],
  };
}

/** What the new names a digest counts are, by the event they would have raised. */
const UNTRACKED_TEXT: Record<Exclude<SummarizedEventName, 'key_abuse'>, string> = {
  new_executor: `sightings of executor names new to the project, past ${NEW_EXECUTORS_PER_KEY_PER_HOUR} per key in the hour: not tracked`,
  clone_detected: `sightings of script hashes new to the project, past ${NEW_SCRIPT_HASHES_PER_KEY_PER_HOUR} per key in the hour: not judged`,
};

/** The digest of an hour whose alerts of one kind went past the hourly budget: what was held back, and a sample. */
function digestBody<E extends SummarizedEventName>(name: E, digest: EventDigest<E>): EmbedBody {
  const text = SUMMARY_TEXT[name];
  const hour = `${digest.hour.replace('T', ' ')}:00 UTC`;
  const fields = [
    fieldOf('Alerts posted', formatCount(digest.posted), true),
    fieldOf('Held back', formatCount(digest.held), true),
    fieldOf('First', formatUtc(digest.firstAt), true),
    fieldOf('Last', formatUtc(digest.lastAt), true),
  ];
  const untracked: SummarizedEventName = name;
  if (digest.untracked > 0 && untracked !== 'key_abuse')
    fields.push(fieldOf('Not tracked', `${formatCount(digest.untracked)} ${UNTRACKED_TEXT[untracked]}`, false));
  if (digest.sample.length > 0) {
    const shown = digest.sample.length < digest.held ? `Sample (${formatCount(digest.sample.length)} of ${formatCount(digest.held)})` : 'All';
    fields.push(fieldOf(shown, listWithin(digest.sample.map(text.line), EMBED_LIMITS.fieldValue), false));
  }
  fields.push(
    fieldOf('What to do', `At most ${ALERTS_PER_HOUR} alerts of a kind are posted per project and hour; the rest are counted here. ${text.advice}`, false),
  );
  return { title: `Digest of the hour from ${hour}: ${formatCount(digest.held + digest.untracked)} more ${text.noun}`, fields };
}

/** What the embed of `event` says: one occurrence, a summary of many, or an hour's digest. */
function bodyOf(event: ProjectEvent): EmbedBody {
  if (event.name !== 'version_deployed' && event.name !== 'execution_drop' && isDigest(event.data)) {
    return digestBody(event.name, event.data as EventDigest<typeof event.name>);
  }
  if (event.name !== 'version_deployed' && event.name !== 'execution_drop' && isSummary(event.data)) {
    return summaryBody(event.name, event.data as EventSummary<typeof event.name>);
  }
  const build = EMBED_BUILDERS[event.name] as (data: ProjectEvent['data']) => EmbedBody;
  return build(event.data);
}

const fieldsLength = (fields: EmbedField[]) => fields.reduce((sum, field) => sum + codePointLength(field.name) + codePointLength(field.value), 0);

/** The embed for one event of the project named `projectName`, within every Discord limit. */
export function buildEmbed(event: ProjectEvent, projectName: string): Embed {
  const body = bodyOf(event);
  const title = truncate(body.title, EMBED_LIMITS.title);
  const fields = body.fields.slice(0, EMBED_LIMITS.fields);
  const footer = { text: truncate(FOOTER_TEXT, EMBED_LIMITS.footerText) };
  // The description takes what the rest leaves of the total: it holds the one unbounded user text (the name).
  const left = EMBED_LIMITS.total - codePointLength(title) - fieldsLength(fields) - codePointLength(footer.text);
  return {
    title,
    description: scriptLine(projectName, event.projectId, Math.min(EMBED_LIMITS.description, left)),
    color: EMBED_COLORS[event.name],
    fields,
    timestamp: new Date(event.occurredAt * 1000).toISOString(),
    footer,
  };
}

/** The message that posts `event`'s embed; nothing in it may ping anyone. */
export function embedMessage(event: ProjectEvent, projectName: string): EmbedMessage {
  return { embeds: [buildEmbed(event, projectName)], allowed_mentions: { parse: [] } };
}

/** Every Discord limit `embed` breaks, as readable messages (empty when it is valid). */
export function embedProblems(embed: Embed): string[] {
  const problems: string[] = [];
  const over = (what: string, text: string, max: number) => {
    if (codePointLength(text) > max) problems.push(`${what} is longer than ${max}`);
  };
  over('title', embed.title, EMBED_LIMITS.title);
  over('description', embed.description, EMBED_LIMITS.description);
  over('footer.text', embed.footer.text, EMBED_LIMITS.footerText);
  if (embed.fields.length > EMBED_LIMITS.fields) problems.push(`more than ${EMBED_LIMITS.fields} fields`);
  embed.fields.forEach((field, i) => {
    over(`fields[${i}].name`, field.name, EMBED_LIMITS.fieldName);
    over(`fields[${i}].value`, field.value, EMBED_LIMITS.fieldValue);
    if (field.name.trim() === '') problems.push(`fields[${i}].name is empty`);
    if (field.value.trim() === '') problems.push(`fields[${i}].value is empty`);
  });
  const total = codePointLength(embed.title) + codePointLength(embed.description) + fieldsLength(embed.fields) + codePointLength(embed.footer.text);
  if (total > EMBED_LIMITS.total) problems.push(`embed is longer than ${EMBED_LIMITS.total} in total`);
  return problems;
}

/** Blue, like the informational embeds: a test says nothing happened. */
const TEST_COLOR = 0x3498db;

/** The one embed "Send test" posts (the console's webhooks page): it names the project and says it is a test. */
export function testEmbedMessage(projectName: string, projectId: string, now: number): EmbedMessage {
  return {
    embeds: [
      {
        title: 'Test notification',
        description: scriptLine(projectName, projectId, EMBED_LIMITS.description - 200),
        color: TEST_COLOR,
        fields: [fieldOf('What this is', "A test sent from the publisher console: this channel receives the project's notifications.", false)],
        timestamp: new Date(now * 1000).toISOString(),
        footer: { text: FOOTER_TEXT },
      },
    ],
    allowed_mentions: { parse: [] },
  };
}
