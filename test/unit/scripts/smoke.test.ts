import { describe, expect, it } from 'vitest';
import { parseSmokeArgs, runChecklist, STEP_NAMES, type Step } from '../../../scripts/smoke';

/** `npm run smoke`'s checklist (scripts/smoke.ts): a line per step, dependents of a failure not run, pass only when all pass. */

const passing = (name: Step['name'], detail = 'fine', ran: string[] = []): Step => ({
  name,
  run: async () => {
    ran.push(name);
    return detail;
  },
});

describe('the smoke checklist', () => {
  it('prints a line per step and passes when every step passes', async () => {
    const lines: string[] = [];
    const { passed } = await runChecklist([passing('console', 'the page'), passing('stats', 'GET stats answered 200')], (line) => lines.push(line));
    expect(passed).toBe(true);
    expect(lines).toEqual(['ok    console       the page', 'ok    stats         GET stats answered 200', 'All 2 steps passed.']);
  });

  it('fails on a failing step, says what failed, skips the steps that need it and still runs the others', async () => {
    const lines: string[] = [];
    const ran: string[] = [];
    const steps: Step[] = [
      passing('console'),
      { name: 'sign-in', run: async () => Promise.reject(new Error('POST /console/api/session answered 401: Missing or invalid API token')) },
      { ...passing('upload', 'uploaded', ran), needs: ['sign-in'] },
      passing('discord-ping', 'PONG', ran),
    ];
    const { passed, outcomes } = await runChecklist(steps, (line) => lines.push(line));
    expect(passed).toBe(false);
    expect(ran).toEqual(['discord-ping']);
    expect(outcomes.map((outcome) => outcome.state)).toEqual(['passed', 'failed', 'not run', 'passed']);
    expect(lines).toEqual([
      'ok    console       fine',
      'FAIL  sign-in       POST /console/api/session answered 401: Missing or invalid API token',
      'skip  upload        needs sign-in, which did not pass',
      'ok    discord-ping  PONG',
      '2 of 4 steps did not pass.',
    ]);
  });

  it('names the steps in the order docs/operations.md documents them', () => {
    expect(STEP_NAMES).toEqual(['console', 'sign-in', 'upload', 'issue-key', 'fetch', 'validate', 'revoke', 'webhook-test', 'discord-ping', 'stats']);
  });
});

describe('the smoke arguments', () => {
  const state = { baseUrl: 'http://127.0.0.1:3000', token: 'sdt_local', projectId: 'prj_local' } as never;

  it('reads the local stack when there is no --url', () => {
    expect(parseSmokeArgs([], () => state)).toMatchObject({ url: 'http://127.0.0.1:3000', token: 'sdt_local', projectId: 'prj_local' });
  });

  it('takes --url and --token for a deployment, without the local Discord key', () => {
    const args = parseSmokeArgs(['--url', 'https://d1.cloudfront.net/', '--token', 'sdt_x'], () => undefined);
    expect(args).toEqual({ url: 'https://d1.cloudfront.net', token: 'sdt_x', projectId: undefined });
  });

  it('refuses --url without a token, an unknown flag and a missing local stack with a sentence naming the fix', () => {
    const saved = process.env.SDAPI_TOKEN;
    delete process.env.SDAPI_TOKEN;
    try {
      expect(() => parseSmokeArgs(['--url', 'https://d1.cloudfront.net'], () => undefined)).toThrow('--url needs --token');
    } finally {
      if (saved !== undefined) process.env.SDAPI_TOKEN = saved;
    }
    expect(() => parseSmokeArgs(['--verbose'], () => state)).toThrow('Unexpected argument "--verbose"');
    expect(() => parseSmokeArgs([], () => undefined)).toThrow('start one with npm start, or pass --url and --token');
  });
});
