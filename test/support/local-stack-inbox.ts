import { expect } from 'vitest';
import type { DiscordStandIn, ReceivedMessage } from '#local/discord-stand-in';

/** The embeds of one color the local stack's Discord stand-in received, in arrival order; only those whose JSON contains `text` if given. */
const embedsOfColor = (discord: DiscordStandIn, color: number, text?: string) =>
  discord
    .received()
    .flatMap((message: ReceivedMessage) =>
      message.embeds.filter((embed) => embed.color === color && (text === undefined || JSON.stringify(embed).includes(text))),
    );

/**
 * Waits until `count` embeds of the color (containing `text`, if given) arrived (the deadline only guards a hang;
 * how soon is the benchmark's), then a little longer to catch a duplicate, and expects exactly `count`.
 */
export async function expectEmbeds(discord: DiscordStandIn, color: number, count: number, text?: string) {
  const deadline = Date.now() + 60_000;
  while (embedsOfColor(discord, color, text).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 600));
  const embeds = embedsOfColor(discord, color, text);
  expect(embeds).toHaveLength(count);
  return embeds;
}
