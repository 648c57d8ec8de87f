/**
 * Discord webhook URLs: the only destinations the service posts to. A configured URL is parsed to its
 * (id, token) and the post goes to the fixed `DISCORD_API_BASE`, never to the configured host itself, so a
 * config pointing anywhere else is never called.
 */

export const DEFAULT_DISCORD_API_BASE = 'https://discord.com/api/v10';

const DISCORD_HOSTS = new Set(['discord.com', 'discordapp.com', 'canary.discord.com', 'ptb.discord.com', 'canary.discordapp.com', 'ptb.discordapp.com']);

/** `/api[/vN]/webhooks/{snowflake}/{token}`; Discord's tokens are URL-safe base64. */
const WEBHOOK_PATH = /^\/api(?:\/v\d{1,2})?\/webhooks\/(\d{1,20})\/([A-Za-z0-9_-]{1,200})\/?$/;

export interface DiscordWebhook {
  id: string;
  token: string;
}

/**
 * The webhook a configured URL names, or undefined for anything that is not exactly a Discord webhook URL:
 * https only, one of Discord's hosts, no port, credentials, query or fragment.
 */
export function parseDiscordWebhookUrl(raw: string): DiscordWebhook | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || !DISCORD_HOSTS.has(url.hostname) || url.port !== '') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  const match = WEBHOOK_PATH.exec(url.pathname);
  if (!match) return undefined;
  return { id: match[1] as string, token: match[2] as string };
}

/** Where a post for `webhook` goes: the API base, the webhook's path, and `wait=true` so Discord answers with the message. */
export function executeWebhookUrl(apiBase: string, webhook: DiscordWebhook): string {
  return `${apiBase.replace(/\/+$/, '')}/webhooks/${webhook.id}/${encodeURIComponent(webhook.token)}?wait=true`;
}

const REDACTED = '[redacted]';

/**
 * A configured URL fit for a log line: a Discord webhook keeps its id and loses its token; any other URL keeps
 * only its scheme and host, since where its secret sits is unknown.
 */
export function redactWebhookUrl(raw: string): string {
  const webhook = parseDiscordWebhookUrl(raw);
  if (webhook) {
    const url = new URL(raw);
    return `https://${url.hostname}${url.pathname.slice(0, url.pathname.indexOf(`/${webhook.id}/`))}/${webhook.id}/${REDACTED}`;
  }
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}/${REDACTED}`;
  } catch {
    return `${REDACTED} (not a URL)`;
  }
}

const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The form Discord gives under Server Settings > Integrations > Webhooks > Copy Webhook URL. */
export const DISCORD_WEBHOOK_URL_FORM = 'https://discord.com/api/webhooks/ID/TOKEN';

/**
 * Why a webhook URL cannot be configured (only a Discord webhook URL is ever posted to, so anything else would be a
 * config that silently never fires), in words after the field's name; undefined when it can. The dashboard's
 * `webhooks add` and the console share it.
 */
export function webhookUrlProblem(text: string): string | undefined {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  if (!parseDiscordWebhookUrl(text)) {
    return `must be a Discord webhook URL, ${DISCORD_WEBHOOK_URL_FORM} (locally the deliveries still go to the inbox of npm start); got ${redactWebhookUrl(text)}`;
  }
  return undefined;
}
