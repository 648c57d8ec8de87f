import { BLACKLIST_LIMITS } from '#domain/blacklist';
import { InvalidInput } from '#domain/errors';
import { EXAMPLE_FINGERPRINT } from '#http/openapi/examples';
import type { OperationDoc } from '#http/openapi/operation-doc';
import { invalid } from '#http/openapi/operation-doc';
import { AddBlacklistBody, BAN_REASON_LENGTH } from '#schemas/requests';
import { AddBlacklistResponse } from '#schemas/responses';
import { EXAMPLE_DISCORD_ID, EXAMPLE_MACHINE_ENTRY_ID } from './blacklist-examples';

/** The OpenAPI operation of add-to-blacklist (its route: add-to-blacklist.ts); the document alone imports it, never a Lambda bundle. */
export const addToBlacklistDoc = (): OperationDoc => ({
  operationId: 'addToBlacklist',
  tag: 'Blacklist',
  summary: 'Blacklist a buyer by machine, Discord id or email hash',
  description: `Exactly one of \`fingerprint\` (64 lowercase hex, as the loader sends it), \`discord_id\` (17 to 20 digits) or \`email_sha256\` (64 lowercase hex: SHA-256 of the trimmed, lowercased address), and \`reason\` (${BAN_REASON_LENGTH.min} to ${BAN_REASON_LENGTH.max} characters of one line, what the buyer reads). Every key of the project the machine was ever bound to, or linked to the Discord id, that is not revoked is banned without end with this reason (\`banned_keys\` counts them; a key banned for good already keeps its ban; at most ${BLACKLIST_LIMITS.keysBannedPerEntry.toLocaleString('en-US')} keys per call). From then on a check that would bind a blacklisted machine to a key is refused \`KEY_BANNED\` with the reason, and a Discord redeem by a blacklisted user is refused. A buyer already listed keeps their entry and their keys are banned again. At most ${BLACKLIST_LIMITS.entriesPerProject.toLocaleString('en-US')} entries per project.`,
  requestBody: {
    name: 'AddBlacklistRequest',
    description: 'The buyer and the reason.',
    examples: {
      machine: { summary: 'A machine', value: { fingerprint: EXAMPLE_FINGERPRINT, reason: 'Leaked the script (WM_3f9a1c7e5b2d8046)' } },
      discord: { summary: 'A Discord user', value: { discord_id: EXAMPLE_DISCORD_ID, reason: 'Chargeback' } },
    },
  },
  ok: {
    name: 'AddBlacklistResponse',
    schema: AddBlacklistResponse,
    description: "The entry's id and the keys it banned now.",
    example: { id: EXAMPLE_MACHINE_ENTRY_ID, banned_keys: 2 } satisfies AddBlacklistResponse,
  },
  errors: [
    invalid('Two buyers in one entry', AddBlacklistBody, { fingerprint: EXAMPLE_FINGERPRINT, discord_id: EXAMPLE_DISCORD_ID, reason: 'Leak' }),
    invalid('Fingerprint in capitals', AddBlacklistBody, { fingerprint: EXAMPLE_FINGERPRINT.toUpperCase(), reason: 'Leak' }),
    {
      summary: 'Blacklist full',
      error: new InvalidInput(
        `This project's blacklist holds ${BLACKLIST_LIMITS.entriesPerProject.toLocaleString('en-US')} entries, its limit: remove one before adding another`,
      ),
    },
  ],
});
