import type { AddBlacklistBody } from '#schemas/requests';
import type { CommandContext } from './command';
import { plural } from './format';

/** What `leak` blacklisted: each buyer's entry id and the keys it banned. */
export interface LeakBlacklisting {
  buyer: { fingerprint: string } | { discord_id: string };
  id: string;
  banned_keys: number;
}

/**
 * After `leak` revoked keys: the machines bound to them and the Discord ids linked to them are their buyers; offer
 * to blacklist each (asked in a terminal, done with --blacklist, a hint otherwise), the reason naming the watermark.
 * Reads each revoked key's detail (one request a key) only once the person said yes.
 */
export async function offerBlacklist(
  context: Pick<CommandContext, 'client' | 'options' | 'io' | 'stdout'>,
  revoked: readonly { keyId: string; watermark: string }[],
): Promise<LeakBlacklisting[]> {
  const { client, options, io, stdout } = context;
  const human = (text: string) => {
    if (!options.json) stdout.write(text);
  };
  if (revoked.length === 0) return [];
  if (!options.blacklist) {
    if (!io.stdinIsTTY) {
      human(`\nTo also blacklist the buyers of the revoked keys (their machines and Discord ids), run again with --blacklist.\n`);
      return [];
    }
    const answer = (await io.ask(`Also blacklist the buyers of the ${plural(revoked.length, 'revoked key')} (their machines and Discord ids)? [y/N] `))
      .trim()
      .toLowerCase();
    if (answer !== 'y' && answer !== 'yes') return [];
  }
  const buyers = new Map<string, { body: AddBlacklistBody; buyer: LeakBlacklisting['buyer'] }>();
  for (const { keyId, watermark } of revoked) {
    const { key } = await client.getKey(keyId);
    const reason = `Leaked the script (WM_${watermark})`;
    for (const { fingerprint } of key.fingerprints) buyers.set(`f:${fingerprint}`, { body: { fingerprint, reason }, buyer: { fingerprint } });
    if (key.discord_id) buyers.set(`d:${key.discord_id}`, { body: { discord_id: key.discord_id, reason }, buyer: { discord_id: key.discord_id } });
  }
  if (buyers.size === 0) human('The revoked keys name no machine and no Discord id: nobody to blacklist.\n');
  const done: LeakBlacklisting[] = [];
  for (const { body, buyer } of buyers.values()) {
    const { id, banned_keys } = await client.addToBlacklist(body);
    done.push({ buyer, id, banned_keys });
    human(`Blacklisted ${'fingerprint' in buyer ? `machine ${buyer.fingerprint}` : `Discord id ${buyer.discord_id}`} as ${id}.\n`);
  }
  return done;
}
