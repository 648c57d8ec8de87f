import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSdapi } from '../../sdapi/main';

export const TOKEN = 'sdt_Q2hhbmdlLW1lLXRoaXMtaXMtYS10ZXN0LXRva2VuLTAx';
export const PROJECT_ID = 'prj_5e0c8a3f71b24d9c6a1f';
export const BASE_URL = 'https://api.test';

export interface RunOptions {
  /** Where requests go: a StandInApi, or `{ fetch }` for a real server. */
  api: { fetch: typeof fetch };
  env?: Record<string, string | undefined>;
  stdinIsTTY?: boolean;
  stderrIsTTY?: boolean;
  /** Answers to prompts, in order; each prompt asked is recorded. */
  answers?: string[];
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  prompts: string[];
  sleeps: number[];
}

/** Run sdapi in-process (against the stand-in's fetch, no socket, unless told otherwise); sleeps are recorded, not waited. */
export async function runCli(argv: string[], options: RunOptions): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const prompts: string[] = [];
  const sleeps: number[] = [];
  const answers = [...(options.answers ?? [])];
  const code = await runSdapi(argv, {
    stdout: {
      write: (text) => {
        stdout += text;
      },
      isTTY: false,
    },
    stderr: {
      write: (text) => {
        stderr += text;
      },
      isTTY: options.stderrIsTTY ?? false,
      columns: 80,
    },
    stdinIsTTY: options.stdinIsTTY ?? false,
    ask: async (question) => {
      prompts.push(question);
      return answers.shift() ?? '';
    },
    env: options.env ?? { SDAPI_BASE_URL: BASE_URL, SDAPI_TOKEN: TOKEN, SDAPI_PROJECT: PROJECT_ID },
    // A folder that does not exist, so no .local/stack.json: settings come only from what the test gives.
    cwd: join(tmpdir(), `sdapi-no-stack-${randomUUID()}`),
    fetch: options.api.fetch,
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { code, stdout, stderr, prompts, sleeps };
}
