import { randomBytes, randomInt } from 'node:crypto';
import type { Stores } from '#adapters/stores';
import { newId } from '#domain/ids';
import type { ScriptStore } from '#domain/ports';
import { publishScript } from '#domain/scripts';
import { hashToken, issueToken, newApiToken } from '#domain/tokens';
import { EVENT_NAMES } from '#schemas/resources';

export const DEMO_PROJECT_NAME = 'Demo Script';

/** Keys before and after the two that share a watermark, so the pair sits mid-list like a real leak. */
const KEYS_BEFORE_SHARED = 70;
const KEYS_AFTER_SHARED = 48;
export const DEMO_KEY_COUNT = KEYS_BEFORE_SHARED + 2 + KEYS_AFTER_SHARED;

const DEMO_VERSIONS = ['Initial release', 'Fix key validation on slow executors', 'Faster loader, new settings menu'] as const;

/**
 * The demo's script of version `n`: it prints its version, and carries the watermark placeholder, so a fetch shows
 * both the version served and the key's watermark stamped in.
 */
function demoScript(n: number): string {
  return [
    `-- Demo Script v${n}: served by POST /v1/loader/script, stamped with the key's watermark`,
    `local WATERMARK = "WM_XXXXXXXXXXXXXXXX"`,
    `print("Demo Script v${n} running (" .. WATERMARK .. ")")`,
    '',
  ].join('\n');
}

export interface DemoSeed {
  ownerId: string;
  /** The raw bearer token; the table holds only its hash. */
  token: string;
  projectId: string;
  /** The watermark two of the demo keys share: what a bulk revoke of a leaked dump would take. */
  sharedWatermark: string;
  /** The raw value of an active demo key (no use cap), for the loader key check; the table holds its hash only. */
  demoKey: string;
  /** The demo key's id, for revoking it over the API. */
  demoKeyId: string;
  keyCount: number;
  versionIds: string[];
  webhookId: string;
  webhookUrl: string;
}

/** A URL of the shape Discord gives an incoming webhook: numeric id (a snowflake) and a 68-character token. */
export function demoDiscordWebhookUrl(): string {
  const snowflake = `1${Array.from({ length: 18 }, () => randomInt(10)).join('')}`;
  return `https://discord.com/api/webhooks/${snowflake}/${randomBytes(51).toString('base64url')}`;
}

/**
 * The demo a fresh local stack starts with, written through the stores the dashboard writes with; its three
 * versions are uploaded as the dashboard uploads them, each with its demo script.
 * The webhook is added before the uploads, so the three `version_deployed` events reach it once the
 * delivery pipeline reads the stream.
 */
export async function seedDemo({ dashboard, tokens }: Pick<Stores, 'dashboard' | 'tokens'>, scripts: ScriptStore, now: number): Promise<DemoSeed> {
  const ownerId = await dashboard.createOwner(now);
  const token = newApiToken();
  await issueToken(tokens, { ownerId, tokenHash: hashToken(token), now });
  const projectId = await dashboard.createProject({ ownerId, name: DEMO_PROJECT_NAME, plan: 'business', now });

  const webhookUrl = demoDiscordWebhookUrl();
  const webhookId = await dashboard.addWebhook({ projectId, url: webhookUrl, events: [...EVENT_NAMES], enabled: true, now });

  const sharedWatermark = randomBytes(8).toString('hex');
  const keys = { projectId, tier: 'standard', maxUses: null, now };
  const [first] = await dashboard.issueKeys({ ...keys, count: KEYS_BEFORE_SHARED });
  if (!first) throw new Error('The demo issued no key');
  await dashboard.issueKeys({ ...keys, count: 2, watermark: sharedWatermark });
  await dashboard.issueKeys({ ...keys, count: KEYS_AFTER_SHARED });

  const versionIds: string[] = [];
  for (const [i, notes] of DEMO_VERSIONS.entries()) {
    // A day apart, oldest first, so the list reads like a release history.
    const uploadedAt = now - (DEMO_VERSIONS.length - 1 - i) * 86_400;
    const bytes = new TextEncoder().encode(demoScript(i + 1));
    versionIds.push((await publishScript({ scripts, versions: dashboard }, { id: newId('ver'), projectId, bytes, notes, now: uploadedAt })).id);
  }
  return { ownerId, token, projectId, sharedWatermark, demoKey: first.key, demoKeyId: first.id, keyCount: DEMO_KEY_COUNT, versionIds, webhookId, webhookUrl };
}
