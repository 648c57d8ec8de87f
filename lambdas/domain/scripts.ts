import { createHash } from 'node:crypto';
import type { LoaderCheckRequest, RefusalCode } from '#schemas/loader';
import type { FullCopyTally } from './full-copies';
import { type HiddenMarkSummary, PLACES_USED, planStamp, type StampPlan, stampBytes } from './hidden-mark';
import { checkKey, type KeyCheckDeps, type Refusal } from './key-check';
import { hashKeyValue, hasKeyValueForm, keyIdOf } from './key-values';
import type { ScriptStore, ScriptVersionStore } from './ports';
import { rateWindowAt } from './rate-limit';

/**
 * Script delivery (DESIGN.md, "Script delivery"): each version's script is stored when it is uploaded and handed,
 * at every execution, only to a valid key, stamped with that key's watermark so a leaked dump names its source
 * (spec §1: "A leaked script dump shows it after the prefix `WM_`").
 */

/** Longest script an upload takes: 5 MiB. */
export const MAX_SCRIPT_BYTES = 5 * 1024 * 1024;

/**
 * Longest a script may be once JSON-escaped, as the loader's function returns it: AWS Lambda answers at most 6 MB,
 * counted on the serialized JSON of the response ("Invocation payload (request and response)", Lambda quotas,
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), less 4 KB for the status, the headers
 * and the watermark line around the script (test/unit/http/served-size.test.ts pins that they fit). A backslash
 * or a quote takes 2 bytes there and a control character up to 6, so a script of escape sequences (`\65\66...`,
 * as obfuscators write string constants) can pass 5 MiB and still be too big to serve: it is refused at upload.
 * The hidden mark adds at most one space per place it uses (PLACES_USED), kept free too.
 */
export const MAX_SERVED_SCRIPT_BYTES = 6 * 1024 * 1024 - 4 * 1024 - PLACES_USED;

/** The bytes a script takes inside the JSON of the response that serves it. */
export const servedScriptBytes = (script: string): number => Buffer.byteLength(JSON.stringify(script), 'utf8');

/** Where a script wants its key's watermark: `WM_` and 16 capital X, as long as the watermark it becomes. */
export const WATERMARK_PLACEHOLDER = 'WM_XXXXXXXXXXXXXXXX';

/** Why a file cannot be a version's script, in words naming the problem; undefined when it can. */
export function scriptFileProblem(bytes: Uint8Array): string | undefined {
  if (bytes.length === 0) return 'is empty: a script has at least 1 byte';
  if (bytes.length > MAX_SCRIPT_BYTES) return `is ${bytes.length} bytes: a script is at most ${MAX_SCRIPT_BYTES} bytes (5 MiB)`;
  let script: string;
  try {
    script = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'is not valid UTF-8: save the script as UTF-8 text';
  }
  const served = servedScriptBytes(script);
  if (served > MAX_SERVED_SCRIPT_BYTES) {
    return (
      `is ${bytes.length} bytes but ${served} once escaped as the loader serves it, and a served script is at most ${MAX_SERVED_SCRIPT_BYTES}` +
      ' (AWS Lambda answers at most 6 MB; each backslash, quote and control character is escaped there): shorten it, or write fewer escape sequences such as \\65 in its strings'
    );
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
  return parts.length === 1 ? `--${mark}\n${parts[0] ?? ''}` : parts.reduce((stamped, part) => stamped + mark + part);
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
  KEY_BANNED: 'This key is banned by the seller.',
  KEY_EXPIRED: 'This key has expired: renew it with the seller.',
  KEY_HWID_LOCKED: 'This key is locked to another device or executor: ask the seller for a reset (HWID reset), then run the script again.',
  KEY_OVER_LIMIT: 'This key has used all of its runs: get a new key from the seller.',
  KEY_INVALID: 'This key is not valid for this script: check that you pasted the whole key.',
};

/**
 * The buyer's sentence for a refusal: a ban's adds the publisher's reason (as data, in quotes) and when it ends,
 * so the buyer learns why and until when without opening a ticket.
 */
export function refusalSentence(refusal: Refusal): string {
  if (refusal.code !== 'KEY_BANNED') return REFUSAL_SENTENCES[refusal.code];
  const { reason, until } = refusal.ban;
  const end = until === null ? 'It lasts until the seller lifts it.' : `It ends ${new Date(until * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC.`;
  return `This key is banned by the seller: "${reason}". ${end}`;
}

/** One immutable version's script, as a container keeps it: cut at its placeholders and hidden mark places (planStamp). */
export interface LoadedScript {
  versionId: string;
  versionNumber: number;
  plan: StampPlan;
}

/**
 * The script as one key receives it: the visible marks (stampParts) and the hidden mark (hidden-mark.ts) in the
 * whitespace between its tokens. A script that does not lex as Luau has no places: the visible marks only.
 */
export const stampScript = (script: LoadedScript, watermark: string): Buffer => stampBytes(script.plan, script.versionId, watermark);

/** Projects whose last-read current version a container remembers: a few MB of ids at most. */
const CURRENT_VERSIONS_REMEMBERED = 50_000;

/**
 * Script bodies by version id, least recently used out first, bounded by their bytes: versions never change, so a
 * body once read serves every later fetch of its version from memory. Beside them, the current version each project
 * had when last read here: never served from (every fetch reads the pointer), only the sign that the project has a
 * version, so its next fetch may read the pointer beside the key's write (CheckGuard).
 */
export class ScriptCache {
  private readonly entries = new Map<string, { script: LoadedScript; bytes: number }>();
  private readonly currentVersions = new Map<string, string>();
  private readonly digests = new Map<string, string>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** The current version `projectId` had when last read in this container, if it was. */
  lastCurrentVersion(projectId: string): string | undefined {
    return this.currentVersions.get(projectId);
  }

  noteCurrentVersion(projectId: string, versionId: string): void {
    this.currentVersions.delete(projectId);
    this.currentVersions.set(projectId, versionId);
    if (this.currentVersions.size > CURRENT_VERSIONS_REMEMBERED) this.currentVersions.delete(this.currentVersions.keys().next().value as string);
  }

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
const SCRIPT_DIGESTS = 10_000;

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
async function currentScript(deps: Pick<ScriptDeliveryDeps, 'versions' | 'scripts' | 'cache'>, projectId: string): Promise<LoadedScript | undefined> {
  const versionId = await deps.versions.currentVersionId(projectId);
  if (!versionId) return undefined;
  deps.cache.noteCurrentVersion(projectId, versionId);
  const cached = deps.cache.get(versionId);
  if (cached) return cached;
  const version = await deps.versions.version(projectId, versionId);
  const bytes = version && (await deps.scripts.get({ projectId, versionId }));
  if (!version || !bytes) throw new Error(`Version ${versionId} of project ${projectId} has no stored script`);
  const script = { versionId, versionNumber: version.versionNumber, plan: planStamp(new TextDecoder().decode(bytes)) };
  deps.cache.set(script, bytes.length);
  return script;
}

/**
 * One fetch of the script: the same check as validate (one code path), guarding the current version's script. A
 * project this container has seen with a version has its pointer read beside the key's write (one round trip); any
 * other has it read first, so a fetch with nothing to serve counts no use. A valid key gets its stamped body, or
 * not-modified when it already holds it.
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
  const holds = (etag: string) => etagMatches(ifNoneMatch, etag);
  // The full-copy limit is judged before the check counts a use (a 429 counts none), on the version about to be
  // served. A key at its limit for the version this container expects has the pointer read first, so a version it
  // was not served yet (an upload or a rollback this container has not seen) always goes through in full.
  const known = deps.cache.lastCurrentVersion(request.project_id);
  const expected = known !== undefined && deps.fullCopies.allows(keyId, known, holds, window.start) ? known : undefined;
  const read = async () => {
    const script = await currentScript(deps, request.project_id);
    if (script && expected === undefined) deps.fullCopies.admit(keyId, script.versionId, holds, window.start, window.resetSeconds);
    return script;
  };
  // Where the pointer goes beside the write, the key's watermark (which never changes) goes too: a key's first fetch
  // in this container still waits for one round trip. Awaited only once the key is counted; a refusal drops it.
  const early = expected !== undefined && hasKeyValueForm(request.key) ? settled(deps.keys.watermarkOf(keyId)) : undefined;
  const checked = await checkKey(deps, request, sourceIp, now, { expected, read });
  if (checked.outcome === 'nothing_to_serve') return { outcome: 'no_version' };
  if (checked.outcome === 'refused') return { outcome: 'refused', code: checked.code, sentence: refusalSentence(checked) };
  const { served: script } = checked;
  const watermark = early ? await early.then((value) => value()) : await deps.keys.watermarkOf(keyId);
  // Keys are never deleted, and this one was just counted.
  if (watermark === undefined) throw new Error(`Key ${keyId} has no watermark`);
  const etag = scriptEtag(script.versionId, watermark);
  if (holds(etag)) {
    // The hash of the copy the loader kept, so it can tell that copy from one something else on the machine edited.
    const sha256 = deps.cache.digest(etag, () => sha256Hex(stampScript(script, watermark)));
    return { outcome: 'not_modified', script, etag, sha256 };
  }
  deps.fullCopies.served(keyId, script.versionId, etag, window.start);
  const bytes = stampScript(script, watermark);
  return { outcome: 'served', script, body: bytes.toString('utf8'), etag, sha256: deps.cache.digest(etag, () => sha256Hex(bytes)) };
}

/** A promise started early whose failure waits to be asked for: no unhandled rejection when it is never awaited. */
function settled<T>(promise: Promise<T>): Promise<() => T> {
  return promise.then(
    (value) => () => value,
    (error: unknown) => () => {
      throw error;
    },
  );
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

/** What an upload answers (dashboard `versions upload`, the console's upload): the version, and its hidden mark's places. */
export interface UploadAnswer {
  id: string;
  version_number: number;
  size_bytes: number;
  sha256: string;
  hidden_mark: HiddenMarkSummary;
}

/**
 * An upload: the file is checked whole first (nothing written for a bad one), then the script is stored under the
 * fresh version id, then the version item is written and made current. A failed version write deletes the stored
 * script again, so no half state is left: a script without a version item is never served (nothing points at it).
 */
export async function publishScript(
  deps: { scripts: ScriptStore; versions: VersionWriter },
  input: { id: string; projectId: string; bytes: Uint8Array; notes: string; now: number },
): Promise<UploadAnswer> {
  const problem = scriptFileProblem(input.bytes);
  if (problem) throw new Error(`The script ${problem}`);
  const sha256 = sha256Hex(input.bytes);
  // What the hidden mark will have to work with (docs/script-delivery.md, "The hidden mark"); checked before anything is written.
  const hiddenMark = planStamp(new TextDecoder().decode(input.bytes)).summary;
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
    return { ...version, size_bytes: input.bytes.length, sha256, hidden_mark: hiddenMark };
  } catch (error) {
    await deps.scripts.delete(object);
    throw error;
  }
}
