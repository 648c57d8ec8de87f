import { createHash } from 'node:crypto';
import type { Key } from '#schemas/resources';
import type { ListKeysResponse } from '#schemas/responses';

/** Ids shaped like the ones the service makes (`<prefix>_` + 20 hex), shared by the examples of every operation. */
export const EXAMPLE = {
  projectId: 'prj_5e0c8a3f71b24d9c6a1f',
  keyId: 'key_0b7d4e9a2c6f18e35a70',
  otherKeyId: 'key_9f21c4a8e07b3d5c6e12',
  watermark: '3f9a1c7e5b2d8046',
  versionId: 'ver_a41d09c7e3b25f8e6d10',
  olderVersionId: 'ver_7c2e5b1a9d04f36e8b27',
  webhookId: 'whk_2d8f4a6c0e1b3795c4e8',
} as const;

/** A machine's fingerprint as a loader sends it: the SHA-256 hex of its machine id. */
export const EXAMPLE_FINGERPRINT = createHash('sha256').update('example-machine-id').digest('hex');

/** A ban as the key detail and a banned key's refusal show it. */
export const EXAMPLE_BAN = { reason: 'Shared the key in a public server', until: 1764480000 };

/** The first key of the key list's example, which the key detail's examples extend. */
export const EXAMPLE_LISTED_KEY = {
  id: EXAMPLE.keyId,
  user_hash: 'c0535e4be2b79ffd93291305436bf889314e4a3faec05ecffcbb7df31ad9e51a',
  tier: 'standard',
  watermark: EXAMPLE.watermark,
  issued_at: 1763788800,
  expires_at: 1766380800,
  max_uses: null,
  current_uses: 12,
  revoked: 0,
} satisfies Key;

/** The key list's example. */
export const listKeysExample = {
  keys: [
    EXAMPLE_LISTED_KEY,
    {
      id: EXAMPLE.otherKeyId,
      user_hash: '5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9',
      tier: 'standard',
      watermark: 'b41e07d93ac2f865',
      issued_at: 1763789400,
      expires_at: 1766381400,
      max_uses: 500,
      current_uses: 500,
      revoked: 1,
    },
  ],
  total: 2,
} satisfies ListKeysResponse;
