import { createHash } from 'node:crypto';
import type { LoaderCheckRequest, RefusalCode } from '#schemas/loader';
import type { FullCopyTally } from './full-copies';
import { checkKey, type KeyCheckDeps } from './key-check';
import { hashKeyValue, keyIdOf } from './key-values';
import type { ScriptStore, ScriptVersionStore } from './ports';
import { rateWindowAt } from './rate-limit';

/**
 * Script delivery (DESIGN.md, "Script delivery"): each version's script is stored when it is uploaded and handed,
 * at every execution, only to a valid key, stamped with that key's watermark so a leaked dump names its source
 * (spec §1: "A leaked script dump shows it after the prefix `WM_`").
 */

/** Longest script an upload takes: 5 MiB. */
export const MAX_SCRIPT_BYTES = 5 * 1024 * 1024;

/** Where a script wants its key's watermark: `WM_` and 16 capital X, as long as the watermark it becomes. */
export const WATERMARK_PLACEHOLDER = 'WM_XXXXXXXXXXXXXXXX';

/** Why a file cannot be a version's script, in words naming the problem; undefined when it can. */
export function scriptFileProblem(bytes: Uint8Array): string | undefined {
  if (bytes.length === 0) return 'is empty: a script has at least 1 byte';
  if (bytes.length > MAX_SCRIPT_BYTES) return `is ${bytes.length} bytes: a script is at most ${MAX_SCRIPT_BYTES} bytes (5 MiB)`;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'is not valid UTF-8: save the script as UTF-8 text';
  }
  return undefined;
}

export const sha256Hex = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/**
 * A script cut at its placeholders, once per version: stamping a fetch then joins the pieces around the mark
 * instead of searching megabytes of text again.
 */
export const placeholderParts = (script: string): readonly string[] => script.split(WATERMARK_PLACEHOLDER);

/**
 * The script as one key receives it: every placeholder becomes `WM_<watermark>`; a script without one gets the
 * line `--WM_<watermark>` in front, a Luau comment, so it runs the same.
 */
export function stampParts(parts: readonly string[], watermark: string): string {
  const mark = `WM_${watermark}`;
  // `+` leaves V8 a rope of the cached pieces rather than a copy of the whole script per fetch.
  return parts.length === 1 ? `--${mark}\n` + (parts[0] ?? '') : parts.reduce((stamped, part) => stamped + mark + part);
}

export const stampWatermark = (script: string, watermark: string): string => stampParts(placeholderParts(script), watermark);

/**
 * A strong ETag of the stamped body. Versions never change, so the version id and the watermark decide the body:
 * the tag is theirs, and a repeat fetch is answered 304 without the body being read or stamped.
 */
export function scriptEtag(versionId: string, watermark: string): string {
  return `"${sha256Hex(`${versionId}\n${watermark}`).slice(0, 32)}"`;
}

/** `If-None-Match` names this tag (alone, in a list, or `*`); the weak comparison RFC 9110 prescribes for it. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === etag;
  });
}

/** What the buyer reads when a fetch is refused: what happened and what to do, one sentence each code. */
export const REFUSAL_SENTENCES: Readonly<Record<RefusalCode, string>> = {
  KEY_REVOKED: 'This key has been revoked: contact the seller for a new one.',
  KEY_EXPIRED: 'This key has expired: renew it with the seller.',
  KEY_HWID_LOCKED: 'This key is locked to another device or executor: ask the seller for a reset (HWID reset), then run the script again.',
  KEY_OVER_LIMIT: 'This key has used all of its runs: get a new key from the seller.',
  KEY_INVALID: 'This key is not valid for this script: check that you pasted the whole key.',
};

/** One immutable version's script, as a container keeps it: cut at its placeholders (placeholderParts). */
export interface LoadedScript {
  versionId: string;
  versionNumber: number;
  parts: readonly string[];
}

/**
 * Script bodies by version id, least recently used out first, bounded by their bytes: versions never change, so a
 * body once read serves every later fetch of its version from memory.
 */
export class ScriptCache {
  private readonly entries = new Map<string, { script: LoadedScript; bytes: number }>();
  private readonly digests = new Map<string, string>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(versionId: string): LoadedScript | undefined {
    const entry = this.entries.get(versionId);
    if (!entry) return undefined;
    // Re-inserted, so a Map's insertion order is the order of use.
    this.entries.delete(versionId);
    this.entries.set(versionId, entry);
    return entry.script;
  }

  set(script: LoadedScript, bytes: number): void {
    if (bytes > this.maxBytes) return;
    const previous = this.entries.get(script.versionId);
    if (previous) this.bytes -= previous.bytes;
    this.entries.delete(script.versionId);
    this.entries.set(script.versionId, { script, bytes });
    this.bytes += bytes;
    for (const [versionId, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(versionId);
      this.bytes -= entry.bytes;
    }
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /**
   * The SHA-256 of the stamped body an ETag names, computed once per container: a 304 answers it too, and stamping
   * and hashing a 5 MiB script costs milliseconds. At most SCRIPT_DIGESTS are kept (about 130 bytes each).
   */
  digest(etag: string, compute: () => string): string {
    const known = this.digests.get(etag);
    if (known) return known;
    const value = compute();
    if (this.digests.size >= SCRIPT_DIGESTS) this.digests.clear();
    this.digests.set(etag, value);
    return value;
  }
}

/** Stamped bodies' hashes a container keeps (ScriptCache.digest): one per key and version served, about 1.3 MB. */
export const SCRIPT_DIGESTS = 10_000;

export interface ScriptDeliveryDeps extends KeyCheckDeps {
  versions: ScriptVersionStore;
  scripts: ScriptStore;
  cache: ScriptCache;
  /** This container's full copies per key and version (one per container, as `addresses`). */
  fullCopies: FullCopyTally;
}

/** What a fetch came to, for the handler to answer: the body, not modified, a refusal, or nothing to serve. */
export type ScriptDelivery =
  | { outcome: 'served'; script: LoadedScript; body: string; etag: string; sha256: string }
  | { outcome: 'not_modified'; script: LoadedScript; etag: string; sha256: string }
  | { outcome: 'refused'; code: RefusalCode; sentence: string }
  | { outcome: 'no_version' };

/**
 * The project's current version's script: the pointer read with strong consistency on every fetch (a rollback or
 * upload that answered is seen at once), the version and its body from the container's cache when it has them.
 * Undefined when the project has no version (or does not exist: the key check then refuses).
 */
export async function currentScript(deps: Pick<ScriptDeliveryDeps, 'versions' | 'scripts' | 'cache'>, projectId: string): Promise<LoadedScript | undefined> {
  const versionId = await deps.versions.currentVersionId(projectId);
  if (!versionId) return undefined;
  const cached = deps.cache.get(versionId);
  if (cached) return cached;
  const version = await deps.versions.version(projectId, versionId);
  const bytes = version && (await deps.scripts.get({ projectId, versionId }));
  if (!version || !bytes) throw new Error(`Version ${versionId} of project ${projectId} has no stored script`);
  const script = { versionId, versionNumber: version.versionNumber, parts: placeholderParts(new TextDecoder().decode(bytes)) };
  deps.cache.set(script, bytes.length);
  return script;
}

/**
 * One fetch of the script: the same check as validate (one code path), guarding the current version's script,
 * read before any use is counted. A valid key gets its stamped body, or not-modified when it already holds it.
 */
export async function deliverScript(
  deps: ScriptDeliveryDeps,
  request: LoaderCheckRequest,
  sourceIp: string,
  now: number,
  ifNoneMatch: string | undefined,
): Promise<ScriptDelivery> {
  const window = rateWindowAt(now);
  const keyId = keyIdOf(hashKeyValue(request.key));
  // The full-copy limit is judged on the version about to be served, before the check counts a use: a 429 counts none.
  const guard = async () => {
    const script = await currentScript(deps, request.project_id);
    if (script) deps.fullCopies.admit(keyId, script.versionId, (etag) => etagMatches(ifNoneMatch, etag), window.start, window.resetSeconds);
    return script;
  };
  const checked = await checkKey(deps, request, sourceIp, now, guard);
  if (checked.outcome === 'nothing_to_serve') return { outcome: 'no_version' };
  if (checked.outcome === 'refused') return { outcome: 'refused', code: checked.code, sentence: REFUSAL_SENTENCES[checked.code] };
  const { served: script, key } = checked;
  const etag = scriptEtag(script.versionId, key.watermark);
  if (etagMatches(ifNoneMatch, etag)) {
    // The hash of the copy the loader kept, so it can tell that copy from one something else on the machine edited.
    const sha256 = deps.cache.digest(etag, () => sha256Hex(stampParts(script.parts, key.watermark)));
    return { outcome: 'not_modified', script, etag, sha256 };
  }
  deps.fullCopies.served(keyId, script.versionId, etag, window.start);
  const body = stampParts(script.parts, key.watermark);
  return { outcome: 'served', script, body, etag, sha256: deps.cache.digest(etag, () => sha256Hex(body)) };
}

/** A version as an upload writes it: its id, chosen before the script is stored under it. */
export interface NewScriptVersion {
  id: string;
  projectId: string;
  sizeBytes: number;
  sha256: string;
  notes: string;
  now: number;
}

/** The dashboard's write of a version item (and its pointer move), after the script is stored. */
export interface VersionWriter {
  uploadVersion(input: NewScriptVersion): Promise<{ id: string; version_number: number }>;
}

/**
 * An upload: the file is checked whole first (nothing written for a bad one), then the script is stored under the
 * fresh version id, then the version item is written and made current. A failed version write deletes the stored
 * script again, so no half state is left: a script without a version item is never served (nothing points at it).
 */
export async function publishScript(
  deps: { scripts: ScriptStore; versions: VersionWriter },
  input: { id: string; projectId: string; bytes: Uint8Array; notes: string; now: number },
): Promise<{ id: string; version_number: number; size_bytes: number; sha256: string }> {
  const problem = scriptFileProblem(input.bytes);
  if (problem) throw new Error(`The script ${problem}`);
  const sha256 = sha256Hex(input.bytes);
  const object = { projectId: input.projectId, versionId: input.id };
  await deps.scripts.put(object, input.bytes);
  try {
    const version = await deps.versions.uploadVersion({
      id: input.id,
      projectId: input.projectId,
      sizeBytes: input.bytes.length,
      sha256,
      notes: input.notes,
      now: input.now,
    });
    return { ...version, size_bytes: input.bytes.length, sha256 };
  } catch (error) {
    await deps.scripts.delete(object);
    throw error;
  }
}
