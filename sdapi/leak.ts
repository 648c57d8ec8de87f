import { readFile } from 'node:fs/promises';
import { MAX_DUMP_BYTES } from '#domain/leak-trace';
import type { CommandContext } from './command';
import { EXIT, UsageError } from './errors';
import { plural, table } from './format';
import { type LeakBlacklisting, offerBlacklist } from './leak-blacklist';
import { progressBar } from './progress';
import { type MalformedMarker, scanFile } from './scan';

/** What `sdapi leak --json` prints: everything the person would have read, for a script. */
export interface LeakReport {
  file: string;
  bytes: number;
  project_id: string;
  watermarks: {
    watermark: string;
    /** Which marks named it: the visible `WM_` marker, the hidden mark, or both. */
    marks: Array<'visible' | 'hidden'>;
    occurrences: number;
    /** The hidden reading: the version it was read against and its agreement; null when only visible. */
    hidden: { version_id: string; agreement: number } | null;
    active_keys: number;
    already_revoked: number;
    revoked_count: number | null;
  }[];
  malformed: MalformedMarker[];
  malformed_not_listed: number;
  confirmed: boolean;
  /** The buyers of the revoked keys that were blacklisted (sdapi/leak-blacklist.ts). */
  blacklisted: LeakBlacklisting[];
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * `sdapi leak FILE`: stream the dump for `WM_` markers, have the API read its hidden mark (`POST …/leak/trace`, which
 * names the keys of obfuscated copies whose `--WM_` line was deleted), look up the keys carrying each watermark (the
 * key list's watermark filter, so a 50,000-key project is never listed), ask (or take --yes), then bulk-revoke each
 * watermark that has active keys. Malformed markers, watermarks no key carries and watermarks whose keys are all
 * revoked already (a repeat run) are reported and left alone.
 */
export async function leakCommand(context: CommandContext<readonly ['FILE']>): Promise<number> {
  const { client, config, options, args, stdout, stderr, io } = context;
  const [file] = args;
  const human = (text: string) => {
    if (!options.json) stdout.write(text);
  };

  const scanning = progressBar(stderr, 'scanning', size);
  const scan = await scanFile(file, (read, total) => scanning.update(read, total))
    .catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read ${file}: ${error.code ?? error.message}`);
    })
    .finally(() => scanning.done());

  const report: LeakReport = {
    file,
    bytes: scan.bytes,
    project_id: config.projectId,
    watermarks: [],
    malformed: scan.malformed,
    malformed_not_listed: scan.malformedNotListed,
    confirmed: false,
    blacklisted: [],
  };
  const activeKeys = new Map<string, string[]>();
  const malformedCount = scan.malformed.length + scan.malformedNotListed;
  human(`Scanned ${file} (${size(scan.bytes)}): ${plural(scan.watermarks.size, 'watermark')}, ${plural(malformedCount, 'malformed marker')}.\n`);
  const hidden = await readHidden(context, file);
  human(
    hidden.size > 0
      ? `The hidden mark names ${plural(hidden.size, 'watermark')}.\n`
      : `The hidden mark names no watermark (read by the API: obfuscated copies are traced even without their WM_ line).\n`,
  );
  if (scan.malformed.length > 0) {
    human(`\nMalformed markers (reported, not revoked):\n`);
    human(
      indent(
        table(
          ['MARKER', 'SEEN', 'PROBLEM'],
          scan.malformed.map((m) => [m.marker, String(m.occurrences), m.problem]),
        ),
      ),
    );
    if (scan.malformedNotListed > 0) human(`  ...and ${plural(scan.malformedNotListed, 'more distinct marker')}, not listed.\n`);
  }

  const named = new Set([...scan.watermarks.keys(), ...hidden.keys()]);
  if (named.size === 0) {
    if (options.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    stderr.write(`sdapi: no valid WM_ watermark (WM_ + 16 lowercase hex characters) and no hidden mark in ${file}; nothing to revoke\n`);
    return EXIT.noWatermark;
  }

  const looking = progressBar(stderr, 'watermarks');
  try {
    for (const watermark of named) {
      looking.update(report.watermarks.length, named.size);
      const keys = await client.keysWithWatermark(watermark);
      activeKeys.set(
        watermark,
        keys.filter((key) => key.revoked === 0).map((key) => key.id),
      );
      const active = keys.filter((key) => key.revoked === 0).length;
      const reading = hidden.get(watermark);
      report.watermarks.push({
        watermark,
        marks: [...(scan.watermarks.has(watermark) ? ['visible' as const] : []), ...(reading ? ['hidden' as const] : [])],
        occurrences: scan.watermarks.get(watermark) ?? 0,
        hidden: reading ?? null,
        active_keys: active,
        already_revoked: keys.length - active,
        revoked_count: null,
      });
    }
  } finally {
    looking.done();
  }

  human(`\nWatermarks in the dump, against the keys of project ${config.projectId}:\n`);
  human(
    indent(
      table(
        ['WATERMARK', 'NAMED BY', 'SEEN', 'ACTIVE KEYS', ''],
        report.watermarks.map((w) => [w.watermark, namedBy(w), String(w.occurrences), String(w.active_keys), standing(w)]),
      ),
    ),
  );

  const targets = report.watermarks.filter((w) => w.active_keys > 0);
  if (targets.length === 0) {
    human('\nNo active key carries any of these watermarks; nothing to revoke.\n');
    if (options.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return EXIT.ok;
  }

  const keyCount = targets.reduce((sum, w) => sum + w.active_keys, 0);
  const question = `Revoke ${plural(keyCount, 'active key')} carrying ${plural(targets.length, 'watermark')} in project ${config.projectId}? [y/N] `;
  if (!options.yes) {
    if (!io.stdinIsTTY)
      throw new UsageError(`Not revoking without confirmation: run in a terminal to be asked, or pass --yes (${question.replace(' [y/N] ', '')})`);
    const answer = (await io.ask(question)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') {
      human('Nothing revoked.\n');
      if (options.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return EXIT.declined;
    }
  }
  report.confirmed = true;

  human('\n');
  let total = 0;
  for (const target of targets) {
    const { revoked_count: revoked, calls } = await client.revokeBulkAll(target.watermark, (answer, call) => {
      if (!answer.complete)
        stderr.write(
          `sdapi: ${target.watermark}: call ${call} revoked ${plural(answer.revoked_count, 'key')} and stopped before its time limit; repeating for the rest\n`,
        );
    });
    target.revoked_count = revoked;
    total += revoked;
    human(`Revoked ${plural(revoked, 'key')} carrying ${target.watermark} (revoked_count ${revoked}${calls > 1 ? `, ${calls} calls` : ''}).\n`);
  }
  if (targets.length > 1) human(`Revoked ${plural(total, 'key')} in all.\n`);
  const revoked = targets.flatMap((target) => (activeKeys.get(target.watermark) ?? []).map((keyId) => ({ keyId, watermark: target.watermark })));
  report.blacklisted = await offerBlacklist(context, revoked);
  if (options.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return EXIT.ok;
}

/** The marks that named a watermark, as the table says it: `visible`, `hidden (agreement 0.98)`, or both. */
function namedBy(w: LeakReport['watermarks'][number]): string {
  return w.marks.map((mark) => (mark === 'hidden' && w.hidden ? `hidden (agreement ${w.hidden.agreement.toFixed(2)})` : mark)).join(' + ');
}

/**
 * The watermarks the dump's hidden mark names, read by the API (`POST …/leak/trace`), which knows the project's
 * versions. A dump past the API's 5 MiB is sent in pieces cut at line ends; one that is not UTF-8 is not sent.
 */
async function readHidden(context: CommandContext<readonly ['FILE']>, file: string): Promise<Map<string, { version_id: string; agreement: number }>> {
  const found = new Map<string, { version_id: string; agreement: number }>();
  const bytes = await readFile(file);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    context.stderr.write(`sdapi: ${file} is not UTF-8 text: its hidden mark is not read, only its WM_ markers\n`);
    return found;
  }
  for (const piece of piecesOf(bytes, MAX_DUMP_BYTES)) {
    for (const entry of (await context.client.traceLeak(piece)).found) {
      if (entry.mark !== 'hidden' || entry.version_id === null || entry.agreement === null) continue;
      const known = found.get(entry.watermark);
      if (!known || known.agreement < entry.agreement) found.set(entry.watermark, { version_id: entry.version_id, agreement: entry.agreement });
    }
  }
  return found;
}

/** The UTF-8 bytes in pieces of at most `maxBytes`, each cut after a line end in its second half or else between characters. */
function piecesOf(bytes: Uint8Array, maxBytes: number): string[] {
  const decoder = new TextDecoder();
  const pieces: string[] = [];
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(bytes.length, start + maxBytes);
    if (end < bytes.length) {
      const newline = bytes.lastIndexOf(0x0a, end - 1);
      if (newline >= start + maxBytes / 2) end = newline + 1;
      // Not inside a character: continuation bytes are 10xxxxxx.
      else while (((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    }
    pieces.push(decoder.decode(bytes.subarray(start, end)));
    start = end;
  }
  return pieces;
}

/** Why a watermark is left alone, or nothing when it will be revoked. */
function standing(w: LeakReport['watermarks'][number]): string {
  if (w.active_keys > 0) return '';
  if (w.already_revoked > 0) return `already revoked (${plural(w.already_revoked, 'key')})`;
  return 'unknown: no key carries it, not revoked';
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '  ');
}
