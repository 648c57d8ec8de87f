import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Embed, embedProblems } from '#domain/webhooks/embeds';
import type { LocalExtension } from './extension';
import { INBOX_CSP, INBOX_HTML, INBOX_SCRIPT } from './inbox-page';

/**
 * A local Discord for webhook deliveries, served by the local server under `/_local/`:
 * - `POST /_local/discord/webhooks/{id}/{token}` answers like Discord's Execute Webhook: the JSON must hold a
 *   non-empty `embeds` array of embeds within Discord's limits (else 400 with Discord's error codes); the
 *   message is kept and answered with 200 and the message object when `?wait=true`, else 204;
 * - `GET /_local/inbox` shows the kept messages the way Discord draws them, newest first, refreshed every second
 *   from `GET /_local/inbox.json`.
 * Start the delivery pipeline with `discordApiBase` `http://127.0.0.1:<port>/_local/discord` to post here.
 */

export const STAND_IN_PREFIX = '/_local/discord';
const WEBHOOK_PATH = /^\/_local\/discord(?:\/api(?:\/v\d+)?)?\/webhooks\/([^/]+)\/([^/]+)\/?$/;
/** Discord's own request limit is larger, but no embed message comes near this. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Only the newest messages are kept, so a long-running local stack does not grow without bound. */
const KEPT_MESSAGES = 200;

/** A message as Discord returns it from Execute Webhook with `wait=true` (the fields the inbox uses). */
export interface ReceivedMessage {
  id: string;
  type: 0;
  content: string;
  channel_id: string;
  webhook_id: string;
  author: { id: string; username: string; bot: true };
  embeds: Embed[];
  /**
   * The request's `allowed_mentions`, kept so a test can see what a post let ping (Discord does not echo it; it
   * applies it). Absent when the request sent none, in which case Discord would ping what the text mentions.
   */
  allowed_mentions?: unknown;
  /** When the stand-in received it, ISO 8601. */
  timestamp: string;
}

export type DiscordStandIn = LocalExtension & {
  /** Messages received so far, oldest first. */
  received(): ReceivedMessage[];
  clear(): void;
};

export function createDiscordStandIn(): DiscordStandIn {
  const messages: ReceivedMessage[] = [];
  let sequence = 0;

  const extension: LocalExtension = async (req, res, url) => {
    const webhook = WEBHOOK_PATH.exec(url.pathname);
    if (webhook) {
      if (req.method !== 'POST') return sendJson(res, 405, { message: '405: Method Not Allowed', code: 0 });
      const [, id = '', token = ''] = webhook;
      if (!/^\d{1,20}$/.test(id) || token === '') return sendJson(res, 404, { message: 'Unknown Webhook', code: 10015 });
      const body = await readBody(req);
      if (body === undefined) return sendJson(res, 413, { message: 'Request entity too large', code: 40005 });
      const parsed = parseExecuteBody(body);
      if ('error' in parsed) return sendJson(res, 400, parsed.error);
      sequence += 1;
      const message: ReceivedMessage = {
        id: snowflake(sequence),
        type: 0,
        content: parsed.content,
        // Discord answers with the channel the webhook posts to; one made-up channel per webhook here.
        channel_id: String(BigInt(id) + 1n),
        webhook_id: id,
        author: { id, username: 'Script Distribution', bot: true },
        embeds: parsed.embeds,
        ...(parsed.allowedMentions === undefined ? {} : { allowed_mentions: parsed.allowedMentions }),
        timestamp: new Date().toISOString(),
      };
      messages.push(message);
      if (messages.length > KEPT_MESSAGES) messages.shift();
      if (url.searchParams.get('wait') === 'true') return sendJson(res, 200, message);
      res.writeHead(204).end();
      return true;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    switch (url.pathname) {
      case '/_local/inbox':
        return send(res, 200, 'text/html; charset=utf-8', INBOX_HTML);
      case '/_local/inbox.js':
        return send(res, 200, 'text/javascript; charset=utf-8', INBOX_SCRIPT);
      case '/_local/inbox.json':
        return sendJson(res, 200, { messages: newestEventFirst(messages) });
      default:
        return false;
    }
  };

  return Object.assign(extension, {
    received: () => [...messages],
    clear: () => {
      messages.length = 0;
    },
  });
}

/**
 * Newest event first, by the time the embed names (when it happened), then newest received: deliveries run in
 * parallel and may arrive out of order (the seed's three uploads did, as v2, v3, v1), the events never do.
 */
function newestEventFirst(messages: readonly ReceivedMessage[]): ReceivedMessage[] {
  const eventTime = (message: ReceivedMessage) => Date.parse(message.embeds[0]?.timestamp ?? message.timestamp);
  return messages
    .map((message, received) => ({ message, received, at: eventTime(message) }))
    .sort((a, b) => b.at - a.at || b.received - a.received)
    .map(({ message }) => message);
}

type ExecuteBody = { embeds: Embed[]; content: string; allowedMentions: unknown } | { error: Record<string, unknown> };

/** What Discord checks before it accepts an Execute Webhook body, with its error codes. */
function parseExecuteBody(body: string): ExecuteBody {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { error: { message: 'The request body contains invalid JSON.', code: 50109 } };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { error: { message: 'Invalid Form Body', code: 50035 } };
  const { embeds = [], content = '', allowed_mentions: allowedMentions } = json as { embeds?: unknown; content?: unknown; allowed_mentions?: unknown };
  if (!Array.isArray(embeds) || typeof content !== 'string') return { error: { message: 'Invalid Form Body', code: 50035 } };
  if (embeds.length === 0 && content === '') return { error: { message: 'Cannot send an empty message', code: 50006 } };
  if (embeds.length > 10) return { error: { message: 'Invalid Form Body', code: 50035, errors: { embeds: 'Must be 10 or fewer in length.' } } };
  const problems = embeds.flatMap((embed, i) =>
    (isEmbed(embed) ? embedProblems(embed) : ['is not an embed object']).map((problem) => `embeds[${i}]: ${problem}`),
  );
  if (problems.length > 0) return { error: { message: 'Invalid Form Body', code: 50035, errors: problems } };
  return { embeds: embeds as Embed[], content, allowedMentions };
}

/** The embed shape this service sends; anything else is refused like a malformed form body. */
function isEmbed(value: unknown): value is Embed {
  if (typeof value !== 'object' || value === null) return false;
  const embed = value as Record<string, unknown>;
  const fields = embed.fields;
  const footer = embed.footer as Record<string, unknown> | undefined;
  return (
    typeof embed.title === 'string' &&
    typeof embed.description === 'string' &&
    Number.isInteger(embed.color) &&
    typeof embed.timestamp === 'string' &&
    typeof footer?.text === 'string' &&
    Array.isArray(fields) &&
    fields.every((field: unknown) => {
      const f = field as Record<string, unknown> | null;
      return typeof f?.name === 'string' && typeof f.value === 'string' && typeof f.inline === 'boolean';
    })
  );
}

/** A Discord-like id: milliseconds since Discord's epoch shifted past a per-process counter. */
function snowflake(sequence: number): string {
  return ((BigInt(Date.now() - 1_420_070_400_000) << 22n) | BigInt(sequence & 0xfff)).toString();
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown): true {
  return send(res, status, 'application/json', JSON.stringify(body));
}

function send(res: ServerResponse, status: number, contentType: string, body: string): true {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(contentType.startsWith('text/html') ? { 'Content-Security-Policy': INBOX_CSP } : {}),
  });
  res.end(body);
  return true;
}
