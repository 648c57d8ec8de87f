import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { planStamp, stampWithPlan } from '#domain/hidden-mark';
import { obfuscatedScript } from '#test-support/luau-fixtures';
import { PROJECT_ID, runCli, TOKEN } from '#test-support/sdapi-run-cli';
import { makeKey, StandInApi } from '#test-support/sdapi-stand-in-api';
import { EXIT } from '../../sdapi/errors';
import type { LeakReport } from '../../sdapi/leak';
import { scanFile } from '../../sdapi/scan';

const LEAKED = '3f9a1c7e5b2d8046';
const ALSO_LEAKED = 'b41e07d93ac2f865';
const UNKNOWN = '0123456789abcdef';
const MIB = 1024 * 1024;

let dir: string;
let api: StandInApi;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdapi-leak-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  api = new StandInApi({
    token: TOKEN,
    projectId: PROJECT_ID,
    keys: [
      makeKey({ watermark: LEAKED }),
      makeKey(),
      makeKey({ watermark: LEAKED }),
      makeKey({ watermark: ALSO_LEAKED }),
      makeKey({ watermark: ALSO_LEAKED, revoked: 1 }),
      ...Array.from({ length: 180 }, () => makeKey()),
    ],
  });
});

function dump(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('sdapi leak on a 50 MB dump', () => {
  const markers: { at: number; text: string }[] = [
    // Delimited like a string or a comment in a script: letters or digits next to one would make it part of the marker.
    { at: 1000, text: ` WM_${LEAKED} ` },
    // Straddles the scanner's 1 MiB read size, so the marker arrives in two chunks.
    { at: MIB - 9, text: `"WM_${LEAKED}"` },
    { at: 7 * MIB + 5, text: `'WM_${ALSO_LEAKED}'` },
    { at: 20 * MIB - 2, text: ` WM_${UNKNOWN} ` },
    { at: 31 * MIB - 11, text: `(WM_${LEAKED.toUpperCase()})` },
    { at: 33 * MIB, text: ` WM_${LEAKED.slice(0, 12)} ` },
    { at: 41 * MIB + 77, text: ` WM_${ALSO_LEAKED}ff ` },
    // The very last bytes of the dump.
    { at: 50 * MIB - 20, text: ` WM_${ALSO_LEAKED}` },
  ];
  let bigDump: string;

  beforeAll(async () => {
    bigDump = join(dir, 'leaked-50mb.lua');
    // Script-like filler without a capital W, so the only markers are the ones placed here.
    const line = Buffer.from('local function f(a, b) return a + b end -- 0x7f3a loader;\n', 'latin1');
    const block = Buffer.alloc(MIB);
    for (let i = 0; i < MIB; i += line.length) line.copy(block, i);
    const file = await open(bigDump, 'w');
    try {
      for (let start = 0; start < 50 * MIB; start += MIB) {
        const chunk = Buffer.from(block);
        for (const marker of markers) {
          const bytes = Buffer.from(marker.text, 'latin1');
          for (let i = 0; i < bytes.length; i++) {
            const position = marker.at + i - start;
            if (position >= 0 && position < MIB) chunk[position] = bytes[i]!;
          }
        }
        await file.write(chunk);
      }
    } finally {
      await file.close();
    }
  });

  afterAll(() => {
    rmSync(bigDump, { force: true });
  });

  it('reads it in a bounded amount of memory', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = () => {
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    gc();
    const baseline = used();
    let peak = 0;
    let chunks = 0;
    const scan = await scanFile(bigDump, () => {
      chunks++;
      // Collect first, so what is measured is what the scan keeps, not garbage not yet collected.
      gc();
      peak = Math.max(peak, used() - baseline);
    });
    expect(scan.bytes).toBe(50 * MIB);
    expect(chunks).toBeGreaterThanOrEqual(50);
    expect(peak).toBeLessThan(8 * MIB);
  });

  it('revokes the keys of each known watermark, reports the unknown one and the malformed markers', async () => {
    const result = await runCli(['leak', bigDump, '--yes'], { api });
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toContain(`Scanned ${bigDump} (50.0 MB): 3 watermarks, 3 malformed markers.`);
    expect(result.stdout).toMatch(new RegExp(`WM_${LEAKED.toUpperCase()}\\s+1\\s+uppercase hex; a watermark is lowercase`));
    expect(result.stdout).toMatch(new RegExp(`WM_${LEAKED.slice(0, 12)}\\s+1\\s+12 hex characters, a watermark has 16`));
    expect(result.stdout).toMatch(new RegExp(`WM_${ALSO_LEAKED}ff\\s+1\\s+18 hex characters, a watermark has 16`));
    expect(result.stdout).toMatch(new RegExp(`${LEAKED}\\s+visible\\s+2\\s+2\\n`));
    expect(result.stdout).toMatch(new RegExp(`${ALSO_LEAKED}\\s+visible\\s+2\\s+1\\n`));
    expect(result.stdout).toMatch(new RegExp(`${UNKNOWN}\\s+visible\\s+1\\s+0\\s+unknown: no key carries it, not revoked`));
    expect(result.stdout).toContain(`Revoked 2 keys carrying ${LEAKED} (revoked_count 2).`);
    expect(result.stdout).toContain(`Revoked 1 key carrying ${ALSO_LEAKED} (revoked_count 1).`);
    expect(result.stdout).toContain('Revoked 3 keys in all.');

    const bulk = api.requests.filter((request) => request.path.endsWith('/keys/revoke-bulk'));
    expect(bulk.map((request) => request.body)).toEqual([{ watermark: LEAKED }, { watermark: ALSO_LEAKED }]);
    expect(api.keys.filter((key) => key.revoked === 0 && [LEAKED, ALSO_LEAKED].includes(key.watermark))).toEqual([]);
    // 185 keys, but only the watermarks' own are read: one filtered request each, never the project's list.
    expect(api.requests.filter((request) => request.path.endsWith('/keys')).map((request) => request.query)).toEqual(
      [LEAKED, ALSO_LEAKED, UNKNOWN].map((watermark) => `?watermark=${watermark}&limit=100&offset=0`),
    );
  });
});

describe('sdapi leak', () => {
  it('says so and exits 3 when the dump has no marker', async () => {
    const result = await runCli(['leak', dump('clean.lua', 'print("hello")\n')], { api });
    expect(result.code).toBe(EXIT.noWatermark);
    expect(result.stderr).toContain('no valid WM_ watermark (WM_ + 16 lowercase hex characters) and no hidden mark');
    // Only the API's reading of the hidden mark: no key looked up, nothing revoked.
    expect(api.requests.map((request) => `${request.method} ${request.path}`)).toEqual([`POST /v1/projects/${PROJECT_ID}/leak/trace`]);
  });

  it('exits 3 listing the malformed markers when no marker is valid', async () => {
    const result = await runCli(['leak', dump('malformed.lua', `x = "WM_${LEAKED.toUpperCase()}"`)], { api });
    expect(result.code).toBe(EXIT.noWatermark);
    expect(result.stdout).toContain('Malformed markers (reported, not revoked):');
    expect(result.stdout).toContain(`WM_${LEAKED.toUpperCase()}`);
    expect(api.requests.map((request) => `${request.method} ${request.path}`)).toEqual([`POST /v1/projects/${PROJECT_ID}/leak/trace`]);
  });

  it('refuses without a terminal and without --yes, revoking nothing', async () => {
    const result = await runCli(['leak', dump('leak.lua', `WM_${LEAKED}`)], { api, stdinIsTTY: false });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toBe(
      `sdapi: Not revoking without confirmation: run in a terminal to be asked, or pass --yes (Revoke 2 active keys carrying 1 watermark in project ${PROJECT_ID}?)\n`,
    );
    expect(result.prompts).toEqual([]);
    expect(api.requests.some((request) => request.path.endsWith('/revoke-bulk'))).toBe(false);
  });

  it('asks on a terminal and revokes only on yes', async () => {
    const file = dump('leak-ask.lua', `WM_${LEAKED} WM_${ALSO_LEAKED}`);
    const declined = await runCli(['leak', file], { api, stdinIsTTY: true, answers: ['n'] });
    expect(declined.code).toBe(EXIT.declined);
    expect(declined.prompts).toEqual([`Revoke 3 active keys carrying 2 watermarks in project ${PROJECT_ID}? [y/N] `]);
    expect(declined.stdout).toContain('Nothing revoked.');
    expect(api.requests.some((request) => request.path.endsWith('/revoke-bulk'))).toBe(false);

    const accepted = await runCli(['leak', file], { api, stdinIsTTY: true, answers: ['y'] });
    expect(accepted.code).toBe(EXIT.ok);
    expect(accepted.stdout).toContain(`Revoked 2 keys carrying ${LEAKED}`);
    expect(accepted.stdout).toContain(`Revoked 1 key carrying ${ALSO_LEAKED}`);
  });

  it('revokes nothing and asks nothing when no active key carries the watermarks', async () => {
    const result = await runCli(['leak', dump('unknown.lua', `WM_${UNKNOWN}`)], { api, stdinIsTTY: true });
    expect(result.code).toBe(EXIT.ok);
    expect(result.prompts).toEqual([]);
    expect(result.stdout).toContain('No active key carries any of these watermarks; nothing to revoke.');
    expect(api.requests.some((request) => request.path.endsWith('/revoke-bulk'))).toBe(false);
  });

  it('on a repeat says each watermark is already revoked, naming how many keys, and revokes nothing', async () => {
    const file = dump('leak-repeat.lua', `WM_${LEAKED} WM_${ALSO_LEAKED}`);
    expect((await runCli(['leak', file, '--yes'], { api })).code).toBe(EXIT.ok);
    const repeat = await runCli(['leak', file, '--yes'], { api });
    expect(repeat.code).toBe(EXIT.ok);
    expect(repeat.stdout).toMatch(new RegExp(`${LEAKED}\\s+visible\\s+1\\s+0\\s+already revoked \\(2 keys\\)`));
    expect(repeat.stdout).toMatch(new RegExp(`${ALSO_LEAKED}\\s+visible\\s+1\\s+0\\s+already revoked \\(2 keys\\)`));
    expect(repeat.stdout).not.toContain('unknown');
    expect(repeat.stdout).toContain('No active key carries any of these watermarks; nothing to revoke.');
  });

  it('names and revokes the buyer of an obfuscated copy whose WM_ line was deleted, saying the hidden mark named it', async () => {
    const version = { id: 'ver_00000000000000000002', version_number: 2, uploaded_at: 1, size_bytes: 1, notes: '' };
    const traced = new StandInApi({ token: TOKEN, projectId: PROJECT_ID, keys: [makeKey({ watermark: LEAKED }), makeKey()], versions: [version] });
    const copy = stampWithPlan(planStamp(obfuscatedScript(5, 60_000)), version.id, LEAKED);
    const file = dump('obfuscated.lua', copy.slice(copy.indexOf('\n') + 1));
    const result = await runCli(['leak', file, '--yes', '--json'], { api: traced });
    expect(result.code).toBe(EXIT.ok);
    const report = JSON.parse(result.stdout) as LeakReport;
    expect(report.watermarks).toEqual([
      {
        watermark: LEAKED,
        marks: ['hidden'],
        occurrences: 0,
        hidden: { version_id: version.id, agreement: 1 },
        active_keys: 1,
        already_revoked: 0,
        revoked_count: 1,
      },
    ]);
    const human = await runCli(['leak', file, '--yes'], { api: traced });
    expect(human.stdout).toMatch(new RegExp(`${LEAKED}\\s+hidden \\(agreement 1.00\\)\\s+0\\s+0\\s+already revoked`));
  });

  it('pages a watermark carried by more keys than one page holds', async () => {
    const wide = new StandInApi({
      token: TOKEN,
      projectId: PROJECT_ID,
      keys: [...Array.from({ length: 150 }, () => makeKey({ watermark: LEAKED })), makeKey()],
    });
    const result = await runCli(['leak', dump('leak-wide.lua', `WM_${LEAKED}`), '--yes'], { api: wide });
    expect(result.stdout).toContain(`Revoked 150 keys carrying ${LEAKED} (revoked_count 150).`);
    expect(wide.requests.filter((request) => request.path.endsWith('/keys')).map((request) => request.query)).toEqual([
      `?watermark=${LEAKED}&limit=100&offset=0`,
      `?watermark=${LEAKED}&limit=100&offset=100`,
    ]);
  });

  it('repeats each bulk revoke the API left incomplete until it is complete, and prints each total and the sum', async () => {
    const many = new StandInApi({
      token: TOKEN,
      projectId: PROJECT_ID,
      keys: [...Array.from({ length: 5 }, () => makeKey({ watermark: LEAKED })), ...Array.from({ length: 2 }, () => makeKey({ watermark: ALSO_LEAKED }))],
      bulkRevokePerCall: 2,
    });
    const result = await runCli(['leak', dump('leak-partial.lua', `WM_${LEAKED} WM_${ALSO_LEAKED}`), '--yes'], { api: many });
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toContain(`Revoked 5 keys carrying ${LEAKED} (revoked_count 5, 3 calls).`);
    expect(result.stdout).toContain(`Revoked 2 keys carrying ${ALSO_LEAKED} (revoked_count 2).`);
    expect(result.stdout).toContain('Revoked 7 keys in all.');
    expect(result.stderr).toContain(`${LEAKED}: call 2 revoked 2 keys and stopped before its time limit; repeating for the rest`);
    expect(many.keys.every((key) => key.revoked === 1)).toBe(true);
  });

  it('prints one JSON report with --json', async () => {
    const result = await runCli(['leak', dump('leak-json.lua', `WM_${LEAKED} WM_${UNKNOWN} WM_${LEAKED}`), '--yes', '--json'], { api });
    expect(result.code).toBe(EXIT.ok);
    const report = JSON.parse(result.stdout) as LeakReport;
    expect(report).toMatchObject({
      project_id: PROJECT_ID,
      confirmed: true,
      malformed: [],
      watermarks: [
        { watermark: LEAKED, occurrences: 2, active_keys: 2, already_revoked: 0, revoked_count: 2 },
        { watermark: UNKNOWN, occurrences: 1, active_keys: 0, already_revoked: 0, revoked_count: null },
      ],
    });
  });

  it('with --blacklist blacklists the machines and Discord ids of the keys it revoked, each once, the reason naming the watermark', async () => {
    const [first, , second] = api.keys;
    const fingerprint = 'd'.repeat(64);
    const buyers = {
      [first?.id ?? '']: { fingerprints: [fingerprint], discordId: '123456789012345678' },
      [second?.id ?? '']: { fingerprints: [fingerprint], discordId: null },
    };
    api = new StandInApi({ token: TOKEN, projectId: PROJECT_ID, keys: api.keys, buyers });
    const result = await runCli(['leak', dump('leak-blacklist.lua', `WM_${LEAKED}`), '--yes', '--blacklist', '--json'], { api });
    expect(result.code).toBe(EXIT.ok);
    const reason = `Leaked the script (WM_${LEAKED})`;
    expect(api.blacklisted).toEqual([
      { fingerprint, reason },
      { discord_id: '123456789012345678', reason },
    ]);
    expect((JSON.parse(result.stdout) as LeakReport).blacklisted.map((done) => done.buyer)).toEqual([{ fingerprint }, { discord_id: '123456789012345678' }]);
  });

  it('offers the blacklist on a terminal after the revoke and blacklists nothing on no; without one it names --blacklist', async () => {
    const file = dump('leak-offer.lua', `WM_${LEAKED}`);
    const asked = await runCli(['leak', file], { api, stdinIsTTY: true, answers: ['y', 'n'] });
    expect(asked.code).toBe(EXIT.ok);
    expect(asked.prompts[1]).toBe('Also blacklist the buyers of the 2 revoked keys (their machines and Discord ids)? [y/N] ');
    expect(api.blacklisted).toEqual([]);
    api.keys.forEach((key) => {
      if (key.watermark === LEAKED) key.revoked = 0;
    });
    const hinted = await runCli(['leak', file, '--yes'], { api });
    expect(hinted.stdout).toContain('run again with --blacklist');
  });

  it('exits 2 when the file cannot be read', async () => {
    const result = await runCli(['leak', join(dir, 'missing.lua')], { api });
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toBe(`sdapi: Cannot read ${join(dir, 'missing.lua')}: ENOENT\n`);
  });
});
