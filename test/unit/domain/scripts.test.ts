import { describe, expect, it } from 'vitest';
import { AddressTally } from '#domain/address-tally';
import { RateLimited } from '#domain/errors';
import { FULL_COPIES_PER_KEY_VERSION_PER_MINUTE, FullCopyTally } from '#domain/full-copies';
import { planStamp } from '#domain/hidden-mark';
import type { TelemetrySink } from '#domain/ports';
import { RefusalMemory } from '#domain/refusal-memory';
import {
  deliverScript,
  etagMatches,
  MAX_SCRIPT_BYTES,
  type NewScriptVersion,
  publishScript,
  REFUSAL_SENTENCES,
  ScriptCache,
  scriptEtag,
  scriptFileProblem,
  sha256Hex,
  stampWatermark,
  WATERMARK_PLACEHOLDER,
} from '#domain/scripts';
import { REFUSAL_CODES } from '#schemas/loader';
import { obfuscatedScript } from '#test-support/luau-fixtures';
import { MemoryKeyCheckStore, MemoryScriptStore, MemoryStores } from '#test-support/memory-stores';

const PROJECT = 'prj_scripts';
const NOW = 1_700_000_000;
const WATERMARK = '0123456789abcdef';
const encode = (text: string) => new TextEncoder().encode(text);

describe('stampWatermark', () => {
  it('replaces every placeholder with WM_<watermark>', () => {
    expect(stampWatermark(`a ${WATERMARK_PLACEHOLDER} b ${WATERMARK_PLACEHOLDER}`, WATERMARK)).toBe(`a WM_${WATERMARK} b WM_${WATERMARK}`);
  });

  it('puts the line --WM_<watermark> in front of a script without the placeholder', () => {
    expect(stampWatermark('print(1)', WATERMARK)).toBe(`--WM_${WATERMARK}\nprint(1)`);
  });

  it('leaves near misses alone: 15 X or lowercase x is not the placeholder', () => {
    expect(stampWatermark('WM_XXXXXXXXXXXXXXX wm_xxxxxxxxxxxxxxxx', WATERMARK)).toBe(`--WM_${WATERMARK}\nWM_XXXXXXXXXXXXXXX wm_xxxxxxxxxxxxxxxx`);
  });
});

describe('scriptEtag and etagMatches', () => {
  it('is strong, the same for the same version and watermark, and different when either changes', () => {
    const tag = scriptEtag('ver_1', WATERMARK);
    expect(tag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(scriptEtag('ver_1', WATERMARK)).toBe(tag);
    expect(scriptEtag('ver_2', WATERMARK)).not.toBe(tag);
    expect(scriptEtag('ver_1', 'fedcba9876543210')).not.toBe(tag);
  });

  it('matches the tag alone, in a list, weak-prefixed, or *; not another tag or no header', () => {
    const tag = scriptEtag('ver_1', WATERMARK);
    expect(etagMatches(tag, tag)).toBe(true);
    expect(etagMatches(`"other", ${tag}`, tag)).toBe(true);
    expect(etagMatches(`W/${tag}`, tag)).toBe(true);
    expect(etagMatches('*', tag)).toBe(true);
    expect(etagMatches('"other"', tag)).toBe(false);
    expect(etagMatches(undefined, tag)).toBe(false);
  });
});

describe('scriptFileProblem', () => {
  it.each([
    ['empty', new Uint8Array(0), /is empty/],
    ['one byte past 5 MiB', new Uint8Array(MAX_SCRIPT_BYTES + 1).fill(0x61), /is at most 5242880 bytes/],
    ['not UTF-8 (a lone Latin-1 byte)', Uint8Array.from([0x61, 0xe9]), /not valid UTF-8/],
  ])('names the problem of a file that is %s', (_name, bytes, message) => {
    expect(scriptFileProblem(bytes)).toMatch(message);
  });

  it('accepts 1 byte, exactly 5 MiB, and multi-byte UTF-8', () => {
    expect(scriptFileProblem(encode('x'))).toBeUndefined();
    expect(scriptFileProblem(new Uint8Array(MAX_SCRIPT_BYTES).fill(0x61))).toBeUndefined();
    expect(scriptFileProblem(encode('print("héllo ✓")'))).toBeUndefined();
  });
});

describe('REFUSAL_SENTENCES', () => {
  it('has a sentence for every refusal code', () => {
    for (const code of REFUSAL_CODES) expect(REFUSAL_SENTENCES[code]).toMatch(/^[A-Z].+\.$/);
  });
});

describe('ScriptCache', () => {
  const script = (versionId: string) => ({ versionId, versionNumber: 1, plan: planStamp(versionId) });

  it('evicts the least recently used bodies once their bytes pass the bound', () => {
    const cache = new ScriptCache(100);
    cache.set(script('a'), 40);
    cache.set(script('b'), 40);
    expect(cache.get('a')).toBeDefined();
    cache.set(script('c'), 40);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    expect(cache.size).toEqual({ entries: 2, bytes: 80 });
  });

  it('keeps no body larger than the whole bound', () => {
    const cache = new ScriptCache(100);
    cache.set(script('huge'), 101);
    expect(cache.size).toEqual({ entries: 0, bytes: 0 });
  });
});

class NullSink implements TelemetrySink {
  reports = 0;
  async report(): Promise<void> {
    this.reports += 1;
  }
}

/** A project with versions written as an upload leaves them: the pointer on the project, the script stored. */
function deliveryFixture() {
  const keys = new MemoryKeyCheckStore();
  const scripts = new MemoryScriptStore();
  const versions = new Map<string, { versionNumber: number; sha256: string }>();
  let current: string | undefined;
  const deps = {
    keys,
    rateLimits: new MemoryStores(),
    addresses: new AddressTally(),
    refusals: new RefusalMemory(),
    telemetry: new NullSink(),
    scripts,
    cache: new ScriptCache(1024 * 1024),
    fullCopies: new FullCopyTally(),
    versions: {
      currentVersionId: async (projectId: string) => (projectId === PROJECT ? current : undefined),
      version: async (_projectId: string, versionId: string) => versions.get(versionId),
    },
  };
  const upload = async (versionId: string, text: string) => {
    await scripts.put({ projectId: PROJECT, versionId }, encode(text));
    versions.set(versionId, { versionNumber: versions.size + 1, sha256: sha256Hex(text) });
    current = versionId;
  };
  const fetch = (key: string, ifNoneMatch?: string, now = NOW) =>
    deliverScript(deps, { project_id: PROJECT, key, fingerprint: 'f'.repeat(64), executor: 'Wave' }, '203.0.113.9', now, ifNoneMatch);
  return { deps, keys, scripts, upload, fetch };
}

describe('deliverScript', () => {
  it('serves a valid key the stamped body and counts one use; not modified for its own ETag, counted too', async () => {
    const { keys, upload, fetch } = deliveryFixture();
    await upload('ver_1', `print("${WATERMARK_PLACEHOLDER}")`);
    const { id, key } = keys.issue(PROJECT, { watermark: WATERMARK, maxUses: 5 });
    const served = await fetch(key);
    expect(served).toMatchObject({ outcome: 'served', body: `print("WM_${WATERMARK}")`, etag: scriptEtag('ver_1', WATERMARK) });
    expect(await fetch(key, scriptEtag('ver_1', WATERMARK))).toMatchObject({ outcome: 'not_modified' });
    expect(keys.storedKey(id)?.currentUses).toBe(2);
  });

  it('refuses a revoked key with the sentence for its code and counts nothing', async () => {
    const { keys, upload, fetch } = deliveryFixture();
    await upload('ver_1', 'print(1)');
    const { id, key } = keys.issue(PROJECT);
    keys.revoke(id);
    expect(await fetch(key)).toEqual({ outcome: 'refused', code: 'KEY_REVOKED', sentence: REFUSAL_SENTENCES.KEY_REVOKED });
    expect(keys.storedKey(id)?.currentUses).toBe(0);
  });

  it("refuses a banned key with a sentence holding the publisher's reason and when the ban ends, and counts nothing", async () => {
    const { keys, upload, fetch } = deliveryFixture();
    await upload('ver_1', 'print(1)');
    const { id, key } = keys.issue(PROJECT);
    keys.setBan(id, { reason: 'Shared the key in #general', until: 1_700_604_800 });
    expect(await fetch(key)).toEqual({
      outcome: 'refused',
      code: 'KEY_BANNED',
      sentence: 'This key is banned by the seller: "Shared the key in #general". It ends 2023-11-21 22:13 UTC.',
    });
    keys.setBan(id, { reason: 'Chargeback', until: null });
    expect(await fetch(key)).toMatchObject({ sentence: 'This key is banned by the seller: "Chargeback". It lasts until the seller lifts it.' });
    expect(keys.storedKey(id)?.currentUses).toBe(0);
  });

  it('answers no_version to a valid key of a project without a version, counting nothing; a revoked key there is still refused', async () => {
    const { keys, fetch } = deliveryFixture();
    const valid = keys.issue(PROJECT);
    const revoked = keys.issue(PROJECT);
    keys.revoke(revoked.id);
    expect(await fetch(valid.key)).toEqual({ outcome: 'no_version' });
    expect(keys.storedKey(valid.id)?.currentUses).toBe(0);
    expect(await fetch(revoked.key)).toMatchObject({ outcome: 'refused', code: 'KEY_REVOKED' });
  });

  it('reads a version body from storage once per container: warm fetches make no storage read', async () => {
    const { keys, scripts, upload, fetch } = deliveryFixture();
    await upload('ver_1', 'print(1)');
    const { key } = keys.issue(PROJECT);
    for (let i = 0; i < 5; i++) await fetch(key);
    expect(scripts.gets).toBe(1);
  });

  it('serves the new current version on the fetch after an upload moved the pointer, the cache notwithstanding', async () => {
    const { keys, upload, fetch } = deliveryFixture();
    await upload('ver_1', 'print("one")');
    const { key } = keys.issue(PROJECT);
    expect(await fetch(key)).toMatchObject({ script: { versionId: 'ver_1' } });
    await upload('ver_2', 'print("two")');
    expect(await fetch(key)).toMatchObject({ outcome: 'served', script: { versionId: 'ver_2' }, body: expect.stringContaining('two') });
  });
});

describe('full copies of one version per key (issue 33 item 4)', () => {
  const limit = FULL_COPIES_PER_KEY_VERSION_PER_MINUTE;

  it(`refuses the full copy past ${limit} in a minute with 429 and no use counted, while 304s and a newly current version pass`, async () => {
    const { keys, upload, fetch } = deliveryFixture();
    await upload('ver_1', 'print(1)');
    const { id, key } = keys.issue(PROJECT, { watermark: WATERMARK, maxUses: null });
    for (let i = 0; i < limit; i++) expect(await fetch(key)).toMatchObject({ outcome: 'served' });
    const refused = await fetch(key).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimited);
    expect((refused as RateLimited).message).toMatch(/at most 10 a minute/);
    expect(keys.storedKey(id)?.currentUses).toBe(limit);
    for (let i = 0; i < 20; i++) expect(await fetch(key, scriptEtag('ver_1', WATERMARK))).toMatchObject({ outcome: 'not_modified' });
    await upload('ver_2', 'print(2)');
    expect(await fetch(key)).toMatchObject({ outcome: 'served', body: `--WM_${WATERMARK}\nprint(2)` });
    expect(keys.storedKey(id)?.currentUses).toBe(limit + 21);
  });

  it('counts each key apart and starts over in the next minute', async () => {
    const { keys, upload, fetch } = deliveryFixture();
    await upload('ver_1', 'print(1)');
    const first = keys.issue(PROJECT, { maxUses: null });
    const second = keys.issue(PROJECT, { maxUses: null });
    for (let i = 0; i < limit; i++) await fetch(first.key);
    await expect(fetch(first.key)).rejects.toBeInstanceOf(RateLimited);
    expect(await fetch(second.key)).toMatchObject({ outcome: 'served' });
    expect(await fetch(first.key, undefined, NOW + 60)).toMatchObject({ outcome: 'served' });
  });
});

describe('publishScript', () => {
  const input = { id: 'ver_new', projectId: PROJECT, bytes: encode('print(1)'), notes: '', now: NOW };

  it('stores the script, then writes the version with its size and SHA-256', async () => {
    const scripts = new MemoryScriptStore();
    const written: NewScriptVersion[] = [];
    const result = await publishScript(
      {
        scripts,
        versions: {
          uploadVersion: async (version) => {
            written.push(version);
            return { id: version.id, version_number: 1 };
          },
        },
      },
      input,
    );
    expect(result).toEqual({ id: 'ver_new', version_number: 1, size_bytes: 8, sha256: sha256Hex('print(1)'), hidden_mark: { positions: 0, weak: true } });
    expect(written).toEqual([{ id: 'ver_new', projectId: PROJECT, sizeBytes: 8, sha256: sha256Hex('print(1)'), notes: '', now: NOW }]);
    expect(scripts.has({ projectId: PROJECT, versionId: 'ver_new' })).toBe(true);
  });

  it('deletes the stored script when the version write fails, and fails with it', async () => {
    const scripts = new MemoryScriptStore();
    const failing = { uploadVersion: async () => Promise.reject(new Error('table unavailable')) };
    await expect(publishScript({ scripts, versions: failing }, input)).rejects.toThrow('table unavailable');
    expect(scripts.has({ projectId: PROJECT, versionId: 'ver_new' })).toBe(false);
  });

  it("answers the hidden mark's places: an obfuscated script has many and is not weak", async () => {
    const script = obfuscatedScript(31, 100_000);
    const versions = { uploadVersion: async (version: NewScriptVersion) => ({ id: version.id, version_number: 2 }) };
    const result = await publishScript({ scripts: new MemoryScriptStore(), versions }, { ...input, bytes: encode(script) });
    expect(result.hidden_mark).toEqual(planStamp(script).summary);
    expect(result.hidden_mark.positions).toBeGreaterThan(10_000);
    expect(result.hidden_mark.weak).toBe(false);
  });

  it('writes nothing for a file that is not a script', async () => {
    const scripts = new MemoryScriptStore();
    const written: unknown[] = [];
    const versions = {
      uploadVersion: async () => {
        written.push(1);
        return { id: 'x', version_number: 1 };
      },
    };
    await expect(publishScript({ scripts, versions }, { ...input, bytes: new Uint8Array(0) })).rejects.toThrow(/is empty/);
    expect(written).toEqual([]);
    expect(scripts.has({ projectId: PROJECT, versionId: 'ver_new' })).toBe(false);
  });
});
