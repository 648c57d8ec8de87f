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
  watermarks: { watermark: string; occurrences: number; active_keys: number; already_revoked: number; revoked_count: number | null }[];
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
 * `sdapi leak FILE`: stream the dump for `WM_` markers, look up the keys carrying each valid watermark (the key
 * list's watermark filter, so a 50,000-key project is never listed), ask (or take --yes), then bulk-revoke each
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

  if (scan.watermarks.size === 0) {
    if (options.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    stderr.write(`sdapi: no valid WM_ watermark (WM_ + 16 lowercase hex characters) in ${file}; nothing to revoke\n`);
    return EXIT.noWatermark;
  }

  const looking = progressBar(stderr, 'watermarks');
  try {
    for (const [watermark, occurrences] of scan.watermarks) {
      looking.update(report.watermarks.length, scan.watermarks.size);
      const keys = await client.keysWithWatermark(watermark);
      activeKeys.set(
        watermark,
        keys.filter((key) => key.revoked === 0).map((key) => key.id),
      );
      const active = keys.filter((key) => key.revoked === 0).length;
      report.watermarks.push({ watermark, occurrences, active_keys: active, already_revoked: keys.length - active, revoked_count: null });
    }
  } finally {
    looking.done();
  }

  human(`\nWatermarks in the dump, against the keys of project ${config.projectId}:\n`);
  human(
    indent(
      table(
        ['WATERMARK', 'SEEN', 'ACTIVE KEYS', ''],
        report.watermarks.map((w) => [w.watermark, String(w.occurrences), String(w.active_keys), standing(w)]),
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

/** Why a watermark is left alone, or nothing when it will be revoked. */
function standing(w: LeakReport['watermarks'][number]): string {
  if (w.active_keys > 0) return '';
  if (w.already_revoked > 0) return `already revoked (${plural(w.already_revoked, 'key')})`;
  return 'unknown: no key carries it, not revoked';
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '  ');
}
