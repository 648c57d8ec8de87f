import { blacklistEntryId } from '#domain/blacklist';
import { EXAMPLE_FINGERPRINT } from '#http/openapi/examples';
import type { ListBlacklistResponse } from '#schemas/responses';

/** The blacklist routes' examples: a machine and a Discord user, as a list shows them. */
export const EXAMPLE_DISCORD_ID = '80351110224678912';
export const EXAMPLE_MACHINE_ENTRY_ID = blacklistEntryId({ kind: 'fingerprint', value: EXAMPLE_FINGERPRINT });

export const listBlacklistExample = {
  entries: [
    {
      id: EXAMPLE_MACHINE_ENTRY_ID,
      fingerprint: EXAMPLE_FINGERPRINT,
      reason: 'Leaked the script (WM_3f9a1c7e5b2d8046)',
      added_by: 'tok_4c1e9a7b2d5f80e36a19',
      created_at: 1763875200,
    },
    {
      id: blacklistEntryId({ kind: 'discord_id', value: EXAMPLE_DISCORD_ID }),
      discord_id: EXAMPLE_DISCORD_ID,
      reason: 'Chargeback',
      added_by: 'tok_4c1e9a7b2d5f80e36a19',
      created_at: 1763878800,
    },
  ],
  total: 2,
} satisfies ListBlacklistResponse;
