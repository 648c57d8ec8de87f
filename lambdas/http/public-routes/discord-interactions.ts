import { DISCORD_KEY_ATTRIBUTES, DISCORD_RETURN_VALUES } from '#adapters/discord-store';
import { UPDATED_ATTRIBUTES } from '#adapters/layout';
import { RATE_WINDOW_RETURN_VALUES } from '#adapters/rate-limit-store';
import { definePublicRoute } from '#http/public-route';

/**
 * Discord's HTTP interactions for a linked project (DESIGN.md, "Buyers help themselves in Discord"): public, the
 * Ed25519 signature of the project's linked Discord application is the credential. A function of its own, so a
 * flood of loader checks can never hold back a reply Discord waits at most 3 seconds for. Discord calls it, not a
 * client of the API: the OpenAPI document leaves it out (docs/discord.md describes it).
 */
export const DISCORD_ROUTE = definePublicRoute({
  method: 'POST',
  path: '/v1/discord/interactions/{project_id}',
  entry: 'discord-interactions',
  mappingKey: 'v1/discord',
  // It reads project items (the link) and key items, queries the byDiscordId index, updates key items naming only
  // the link's and the reset's attributes, puts the project's audit entries, and counts refusals per address.
  tableAccess: [
    // The link on the project item; each key read back after its conditional write.
    { actions: ['dynamodb:GetItem'], partitions: ['project', 'key'] },
    { queryIndex: 'byDiscordId' },
    { actions: ['dynamodb:BatchGetItem'], partitions: ['key'] },
    { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: DISCORD_KEY_ATTRIBUTES, returnValues: DISCORD_RETURN_VALUES },
    { actions: ['dynamodb:PutItem'], partitions: ['projectAudit'] },
    // A refused signature counts in its address's window (lambdas/domain/unsigned-refusals.ts).
    { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'], attributes: UPDATED_ATTRIBUTES.rateWindow, returnValues: RATE_WINDOW_RETURN_VALUES },
    // A redeem first reads the user's blacklist entry (#domain/blacklist blacklistProblem).
    { actions: ['dynamodb:GetItem'], partitions: ['blacklist'] },
  ],
});
