import { describe, expect, it } from 'vitest';
import { executeWebhookUrl, parseDiscordWebhookUrl, redactWebhookUrl } from '#domain/webhooks/discord-webhook-url';

const TOKEN = 'AbC-dEf_123456789';

describe('parseDiscordWebhookUrl', () => {
  it.each([
    'https://discord.com/api/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://discordapp.com/api/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://canary.discord.com/api/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://ptb.discord.com/api/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://canary.discordapp.com/api/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://ptb.discordapp.com/api/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://discord.com/api/v10/webhooks/123456789012345678/AbC-dEf_123456789',
    'https://discord.com/api/v9/webhooks/123456789012345678/AbC-dEf_123456789/',
  ])('accepts the Discord webhook URL %s', (url) => {
    expect(parseDiscordWebhookUrl(url)).toEqual({ id: '123456789012345678', token: TOKEN });
  });

  it.each([
    ['plain http', 'http://discord.com/api/webhooks/1/tok'],
    ['another host', 'https://example.com/api/webhooks/1/tok'],
    ['a look-alike host', 'https://discord.com.evil.example/api/webhooks/1/tok'],
    ['a subdomain not on the list', 'https://evil.discord.com/api/webhooks/1/tok'],
    ['a port', 'https://discord.com:8443/api/webhooks/1/tok'],
    ['credentials', 'https://user:pw@discord.com/api/webhooks/1/tok'],
    ['a query', 'https://discord.com/api/webhooks/1/tok?x=1'],
    ['a fragment', 'https://discord.com/api/webhooks/1/tok#x'],
    ['a non-numeric id', 'https://discord.com/api/webhooks/abc/tok'],
    ['no token', 'https://discord.com/api/webhooks/1'],
    ['an extra path segment', 'https://discord.com/api/webhooks/1/tok/slack'],
    ['a path outside /api', 'https://discord.com/webhooks/1/tok'],
    ['a path traversal', 'https://discord.com/api/webhooks/1/../../users/@me'],
    ['not a URL', 'discord webhook please'],
  ])('rejects %s', (_, url) => {
    expect(parseDiscordWebhookUrl(url)).toBeUndefined();
  });
});

describe('executeWebhookUrl', () => {
  it('posts to the API base, never to the configured host, with wait=true', () => {
    expect(executeWebhookUrl('https://discord.com/api/v10', { id: '1', token: TOKEN })).toBe(`https://discord.com/api/v10/webhooks/1/${TOKEN}?wait=true`);
    expect(executeWebhookUrl('http://127.0.0.1:3000/_local/discord/', { id: '1', token: TOKEN })).toBe(
      `http://127.0.0.1:3000/_local/discord/webhooks/1/${TOKEN}?wait=true`,
    );
  });
});

describe('redactWebhookUrl', () => {
  it('keeps the webhook id and drops the token', () => {
    expect(redactWebhookUrl(`https://discord.com/api/v10/webhooks/123/${TOKEN}`)).toBe('https://discord.com/api/v10/webhooks/123/[redacted]');
  });

  it('keeps only scheme and host of any other URL', () => {
    expect(redactWebhookUrl('https://hooks.example.com/services/T000/B000/secret?token=x')).toBe('https://hooks.example.com/[redacted]');
    expect(redactWebhookUrl('not a url secret')).toBe('[redacted] (not a URL)');
  });
});
