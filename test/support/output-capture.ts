import { format } from 'node:util';
import { vi } from 'vitest';

/**
 * Everything the process prints until `restore()`: writes to stdout and stderr (where Powertools Logger
 * prints) and calls of the console methods (which vitest routes around the process streams). What a log
 * pipeline would see, as one text.
 */
export function captureAllOutput() {
  const chunks: string[] = [];
  const streamSpies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write),
  );
  const consoleSpies = (['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      chunks.push(`${format(...args)}\n`);
    }),
  );
  return {
    text: () => chunks.join(''),
    /** Non-empty lines printed so far. */
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.trim() !== ''),
    restore: () => {
      for (const spy of [...streamSpies, ...consoleSpies]) spy.mockRestore();
    },
  };
}

/** The secrets of `secrets` that occur in `text`, for an assertion that names them when it fails. */
export function leakedSecrets(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => secret.length > 0 && text.includes(secret));
}
