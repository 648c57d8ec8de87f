import type { DiscordLink } from '#domain/discord/link';
import type { ConditionalWrite, DiscordKeyStore, DiscordKeyView } from '#domain/ports';

/**
 * DiscordKeyStore in memory, with the same conditions the DynamoDB store writes under (lambdas/adapters/
 * discord-store.ts), for the unit tests of the replies; test/integration/store-contract/discord-store.test.ts holds
 * both to one contract, and test/integration/discord.test.ts runs the real one.
 */
export class MemoryDiscordStore implements DiscordKeyStore {
  readonly links = new Map<string, DiscordLink>();
  readonly projects = new Set<string>();
  readonly keys = new Map<string, DiscordKeyView>();

  async discordLink(projectId: string): Promise<DiscordLink | undefined> {
    return this.links.get(projectId);
  }

  async setDiscordLink(projectId: string, link: DiscordLink): Promise<boolean> {
    if (!this.projects.has(projectId)) return false;
    this.links.set(projectId, link);
    return true;
  }

  async removeDiscordLink(projectId: string): Promise<boolean> {
    this.links.delete(projectId);
    return this.projects.has(projectId);
  }

  async linkKeyToUser(key: { projectId: string; keyId: string; keyHash: string }, discordId: string, now: number): Promise<ConditionalWrite> {
    const found = this.keys.get(key.keyId);
    const before = found && { ...found };
    const may =
      found &&
      found.keyHash === key.keyHash &&
      found.projectId === key.projectId &&
      !found.revoked &&
      found.expiresAt > now &&
      (found.discordId === null || found.discordId === discordId);
    if (!found || !before || !may) return { written: false, key: before };
    found.discordId = discordId;
    return { written: true, key: { ...found } };
  }

  async keysOfUser(projectId: string, discordId: string): Promise<DiscordKeyView[]> {
    return [...this.keys.values()].filter((key) => key.projectId === projectId && key.discordId === discordId).map((key) => ({ ...key }));
  }

  async resetMachinesOfUser(key: { projectId: string; keyId: string }, discordId: string, now: number, cooldownCutoff: number): Promise<ConditionalWrite> {
    const found = this.keys.get(key.keyId);
    const before = found && { ...found };
    const may =
      found &&
      found.projectId === key.projectId &&
      found.discordId === discordId &&
      found.boundMachines > 0 &&
      (found.hwidResetAt === null || found.hwidResetAt <= cooldownCutoff);
    if (!found || !before || !may) return { written: false, key: before };
    found.boundMachines = 0;
    found.hwidResetAt = now;
    // The key after the write, save that `boundMachines` says how many it unbound.
    return { written: true, key: { ...found, boundMachines: before.boundMachines } };
  }
}
