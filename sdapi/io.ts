import { createInterface } from 'node:readline/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { ProgressTarget } from './progress';

export type Output = ProgressTarget;

/** Everything the CLI touches outside itself, so tests can run it in-process against a stand-in API. */
export interface CliIo {
  stdout: Output;
  stderr: Output;
  /** A person can answer a prompt only when stdin is a terminal. */
  stdinIsTTY: boolean;
  /** Ask on stderr, read one line from stdin. */
  ask(question: string): Promise<string>;
  env: Record<string, string | undefined>;
  cwd: string;
  fetch: typeof fetch;
  sleep(ms: number): Promise<void>;
  /** Milliseconds since the epoch (Date.now unless a test fixes it): `keys ban --for` counts from it. */
  now?: () => number;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdinIsTTY: process.stdin.isTTY === true,
    ask: async (question) => {
      const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY === true });
      try {
        return await prompt.question(question);
      } finally {
        prompt.close();
      }
    },
    env: process.env,
    cwd: process.cwd(),
    fetch: globalThis.fetch,
    sleep: (ms) => delay(ms),
  };
}

/**
 * C0 and C1 control characters but tab and line feed. Text the API returns (a key's note, an executor name, an
 * error echoing a field) is written by people sdapi does not trust; raw, `\u001b]52;c;…` would write the
 * clipboard and `\u001b[2K` erase the line above.
 */
const TERMINAL_CONTROLS = /(?![\t\n])\p{Cc}/gu;

/** The text with every control character as a visible `\uXXXX`: inert in a terminal, and still valid inside a JSON string. */
const inertForTerminal = (text: string): string =>
  text.replace(TERMINAL_CONTROLS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * Writes through `output` with every known secret blanked out and every control character made inert
 * (inertForTerminal); only `redraw` emits an escape sequence, sdapi's own. The token never goes into a message on
 * purpose; this is the net under that rule for text sdapi does not control (an error from a library, a
 * server echoing a header back).
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined): void {
    // A very short "secret" would blank innocent text; real tokens are long.
    if (secret && secret.length >= 8) this.secrets.add(secret);
  }

  wrap(output: Output): Output {
    return {
      write: (text) => output.write(inertForTerminal(this.redact(text))),
      redraw: (text) => output.write(`\r\x1b[K${inertForTerminal(this.redact(text))}`),
      get isTTY() {
        return output.isTTY;
      },
      get columns() {
        return output.columns;
      },
    };
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.secrets) result = result.replaceAll(secret, '[token hidden]');
    return result;
  }
}
