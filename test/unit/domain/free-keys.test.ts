import { describe, expect, it } from 'vitest';
import {
  type CheckpointReturn,
  type CheckpointVerifier,
  FREE_SESSION_LIMITS,
  type FreeSession,
  judgeReturn,
  MIN_CHECKPOINT_SECONDS,
  sessionWindows,
  startSession,
  type Verdict,
} from '#domain/free-keys/session';
import { FreeKeySettings, freeSettingsProblem, viewOf } from '#schemas/free-keys';

/** The free keys' session (lambdas/domain/free-keys/session.ts): each return is judged before anything advances. */

const NOW = 1_800_000_000;
const MACHINE = 'a'.repeat(64);
const ADDRESS = '203.0.113.7';

const settings = FreeKeySettings.parse({
  checkpoints: [
    { provider: 'workink', url: 'https://work.ink/1a/demo', link_id: '4242', secret: 'unused-secret' },
    { provider: 'linkvertise', url: 'https://link-to.net/1/demo', link_id: 'lv-demo', secret: 'lv-api-token' },
  ],
});

/** A verifier that answers `verdict` and records what it was asked. */
function scripted(verdict: Verdict) {
  const asked: string[] = [];
  const verifier: CheckpointVerifier = {
    verify: async (checkpoint, ret) => {
      asked.push(`${checkpoint.provider}:${ret.token}`);
      return verdict;
    },
  };
  const used = new Set<string>();
  const claimToken = async (projectId: string, provider: string, tokenId: string) => {
    const id = `${projectId}/${provider}/${tokenId}`;
    if (used.has(id)) return false;
    used.add(id);
    return true;
  };
  return { deps: { verifier, claimToken }, asked };
}

const session = (): FreeSession => startSession({ projectId: 'prj_demo', fingerprint: MACHINE, address: ADDRESS, now: NOW });
const later = NOW + MIN_CHECKPOINT_SECONDS.workink;
const honest = (token = 'tok-1'): CheckpointReturn => ({ token, address: ADDRESS, fingerprint: MACHINE });

describe('settings', () => {
  it('apply the defaults: on, 24 h, one machine, one key per machine a day', () => {
    expect(settings).toMatchObject({ enabled: true, duration_hours: 24, machines: 1, keys_per_machine_per_day: 1 });
  });

  it('refuse 0 or 6 checkpoints, a duration past 72 h and an unknown provider, naming the field', () => {
    const one = settings.checkpoints[0];
    expect(freeSettingsProblem({ checkpoints: [] })).toMatch(/checkpoints must hold at least 1/);
    expect(freeSettingsProblem({ checkpoints: Array(6).fill(one) })).toMatch(/checkpoints must hold at most 5/);
    expect(freeSettingsProblem({ checkpoints: [one], duration_hours: 73 })).toMatch(/duration_hours must be at most 72/);
    expect(freeSettingsProblem({ checkpoints: [{ ...one, provider: 'adfly' }] })).toMatch(/^checkpoints\.0\.provider: provider must be one of/);
    expect(freeSettingsProblem({ checkpoints: [one], duration_hours: 72 })).toBeUndefined();
  });

  it('are shown without their secrets', () => {
    expect(JSON.stringify(viewOf(settings))).not.toContain('lv-api-token');
  });
});

describe('a return from a checkpoint', () => {
  it('passes checkpoint after checkpoint, and the last one finishes the session', async () => {
    const { deps } = scripted({ kind: 'valid', tokenId: 't1', linkId: '4242', address: ADDRESS });
    const first = await judgeReturn(deps, settings, session(), honest(), later);
    expect(first).toMatchObject({ kind: 'passed', done: false, session: { passed: 1, sentAt: later } });
    if (first.kind !== 'passed') return;
    const lv = scripted({ kind: 'valid', tokenId: 'h1' });
    const second = await judgeReturn(lv.deps, settings, first.session, honest('h1'), later + 10);
    expect(second).toMatchObject({ kind: 'passed', done: true, session: { passed: 2 } });
    if (second.kind !== 'passed') return;
    expect(await judgeReturn(lv.deps, settings, second.session, honest('h2'), later + 20)).toEqual({ kind: 'finished' });
  });

  it.each([
    ['no_token', { token: undefined, address: ADDRESS, fingerprint: MACHINE }, later],
    ['too_fast', honest(), later - 1],
    ['other_address', { token: 'tok-1', address: '198.51.100.1', fingerprint: MACHINE }, later],
    ['other_machine', { token: 'tok-1', address: ADDRESS, fingerprint: 'b'.repeat(64) }, later],
  ] as const)('refuses %s before asking the provider (its token is not spent), and sends the buyer again', async (reason, ret, at) => {
    const { deps, asked } = scripted({ kind: 'valid', tokenId: 't1', linkId: '4242' });
    const start = session();
    const outcome = await judgeReturn(deps, settings, start, ret, at);
    expect(outcome).toMatchObject({ kind: 'bypass', reason, session: { passed: 0, sentAt: at } });
    if (outcome.kind === 'bypass') expect(outcome.session.nonce).not.toBe(start.nonce);
    expect(asked).toEqual([]);
  });

  it.each([
    ['invalid_token', { kind: 'invalid' }],
    ['other_link', { kind: 'valid', tokenId: 't1', linkId: '9999' }],
    ['other_address', { kind: 'valid', tokenId: 't1', address: '198.51.100.1' }],
  ] as const)('refuses %s on what the provider answered', async (reason, verdict) => {
    const { deps } = scripted(verdict);
    expect(await judgeReturn(deps, settings, session(), honest(), later)).toMatchObject({ kind: 'bypass', reason, session: { passed: 0 } });
  });

  it('refuses a token the provider still calls valid once it was used here (reused token)', async () => {
    const { deps } = scripted({ kind: 'valid', tokenId: 'same' });
    expect(await judgeReturn(deps, settings, session(), honest('same'), later)).toMatchObject({ kind: 'passed' });
    expect(await judgeReturn(deps, settings, session(), honest('same'), later)).toMatchObject({ kind: 'bypass', reason: 'reused_token' });
  });

  it('changes nothing when the provider does not answer', async () => {
    const { deps } = scripted({ kind: 'unavailable', detail: 'timed out' });
    expect(await judgeReturn(deps, settings, session(), honest(), later)).toEqual({ kind: 'unavailable', detail: 'timed out' });
  });

  it('takes a Lootlabs return without a token (its proof is the postback)', async () => {
    const loot = FreeKeySettings.parse({ checkpoints: [{ provider: 'lootlabs', url: 'https://loot-link.com/s?x', link_id: 'll', secret: 's'.repeat(32) }] });
    const { deps, asked } = scripted({ kind: 'valid', tokenId: 'u1', address: ADDRESS });
    const outcome = await judgeReturn(deps, loot, session(), { token: undefined, address: ADDRESS, fingerprint: undefined }, later);
    expect(outcome).toMatchObject({ kind: 'passed', done: true });
    expect(asked).toEqual(['lootlabs:']);
  });
});

describe('session starts', () => {
  it('count per address and per machine in the hour, with the limits of docs/limits.md', () => {
    const windows = sessionWindows('prj_demo', ADDRESS, MACHINE, NOW + 59);
    expect(windows.map((w) => w.limit)).toEqual([FREE_SESSION_LIMITS.perAddressPerHour, FREE_SESSION_LIMITS.perMachinePerHour]);
    expect(new Set(windows.map((w) => w.window.start))).toEqual(new Set([NOW + 59 - ((NOW + 59) % 3600)]));
    expect(windows[0]?.bucket).not.toBe(windows[1]?.bucket);
  });

  it('have unguessable ids and nonces', () => {
    const a = session();
    const b = session();
    expect(a.id).toMatch(/^[0-9a-f]{32}$/);
    expect(a.id).not.toBe(b.id);
    expect(a.nonce).not.toBe(b.nonce);
  });
});
