import { describe, expect, it } from 'vitest';
import { planStamp } from '#domain/hidden-mark';
import { MAX_SCRIPT_BYTES, MAX_SERVED_SCRIPT_BYTES, scriptEtag, scriptFileProblem, servedScriptBytes, stampScript } from '#domain/scripts';
import { scriptResponse } from '#http/loader-script';
import { LAMBDA_RESPONSE_BYTES } from '#http/responses';

/**
 * Issue 31: a script the upload accepts must be servable. The loader's function returns the script inside JSON, and
 * Lambda's 6 MB response limit counts that JSON, where every backslash, quote and control character is escaped.
 */

const encode = (text: string) => new TextEncoder().encode(text);

/** An obfuscator's output: string constants written as decimal escapes (`"\104\101..."`), one local a line, to `bytes`. */
function obfuscatorStyle(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `local v${i}="${Array.from({ length: 24 }, (_, c) => `\\${65 + ((i + c) % 26)}`).join('')}"\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('').slice(0, bytes);
}

/**
 * What the function returns for a fetch of `script` (no placeholder, so the watermark line is added; the hidden mark
 * in its places), as Lambda serializes it.
 */
function servedResponseBytes(script: string): number {
  const watermark = 'f'.repeat(16);
  const versionId = `ver_${'z'.repeat(26)}`;
  const loaded = { versionId, versionNumber: Number.MAX_SAFE_INTEGER, plan: planStamp(script) };
  const response = scriptResponse({
    outcome: 'served',
    script: loaded,
    body: stampScript(loaded, watermark).toString('utf8'),
    etag: scriptEtag(versionId, watermark),
    sha256: 'e'.repeat(64),
  });
  return Buffer.byteLength(JSON.stringify(response), 'utf8');
}

describe('the served size of a script (the upload refuses what Lambda could not answer)', () => {
  it('refuses a 5 MiB obfuscator-style script (string constants as \\65\\66...) whose escaped form passes 6 MB, saying why and what to do', () => {
    const script = obfuscatorStyle(5_242_775);
    expect(script.length).toBeLessThanOrEqual(MAX_SCRIPT_BYTES);
    expect(servedResponseBytes(script)).toBeGreaterThan(LAMBDA_RESPONSE_BYTES);
    const problem = scriptFileProblem(encode(script));
    expect(problem).toMatch(
      /^is 5242775 bytes but \d+ once escaped as the loader serves it, and a served script is at most 6270976 \(AWS Lambda answers at most 6 MB;/,
    );
    expect(problem).toContain('shorten it, or write fewer escape sequences such as \\65 in its strings');
  });

  it('accepts a script at the escaped limit, and its whole response (status, headers, watermark line) fits in 6 MB', () => {
    const escapes = obfuscatorStyle(4_000_000);
    const padding = 'a'.repeat(MAX_SERVED_SCRIPT_BYTES - servedScriptBytes(escapes));
    const script = escapes + padding;
    expect(servedScriptBytes(script)).toBe(MAX_SERVED_SCRIPT_BYTES);
    expect(scriptFileProblem(encode(script))).toBeUndefined();
    expect(servedResponseBytes(script)).toBeLessThanOrEqual(LAMBDA_RESPONSE_BYTES);
    expect(scriptFileProblem(encode(`${script}\\`))).toMatch(/once escaped as the loader serves it/);
  });

  it('keeps the 5 MiB promise for a script of ordinary text: 5 MiB of code lines are served', () => {
    const line = 'local frame = workspace:FindFirstChild("Frame")\n';
    const script = line.repeat(Math.ceil(MAX_SCRIPT_BYTES / line.length)).slice(0, MAX_SCRIPT_BYTES);
    expect(encode(script)).toHaveLength(MAX_SCRIPT_BYTES);
    expect(scriptFileProblem(encode(script))).toBeUndefined();
    expect(servedResponseBytes(script)).toBeLessThanOrEqual(LAMBDA_RESPONSE_BYTES);
  });
});
