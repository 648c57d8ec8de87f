import { postEmbeds } from '#adapters/discord-client';
import { AUDIT_ACTIONS } from '#domain/audit';
import { InvalidInput, KeyNotFound } from '#domain/errors';
import type { Webhook } from '#domain/model';
import { executeWebhookUrl, parseDiscordWebhookUrl, redactWebhookUrl, webhookUrlProblem } from '#domain/webhooks/discord-webhook-url';
import { testEmbedMessage } from '#domain/webhooks/embeds';
import { AddWebhookBody, EditWebhookBody } from '#schemas/console';
import { type ConsoleDeps, defineConsoleRoute, json, NO_CONTENT, read, recordChange, write } from '../console-route';

/** The spec's "managed in a dashboard": a project's webhooks listed (token hidden), added, edited, deleted, tested. */

/** Answered 404 like an unknown key: a webhook of another project, or none. */
class WebhookNotFound extends KeyNotFound {
  override readonly message: string;
  constructor(webhookId: string) {
    super(webhookId);
    this.message = `Webhook ${webhookId} not found in this project`;
  }
}

function parseEvents(events: string): string[] {
  try {
    const parsed: unknown = JSON.parse(events);
    return Array.isArray(parsed) ? parsed.filter((name): name is string => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

const webhookAnswer = (webhook: Webhook) => ({
  id: webhook.id,
  url_hint: redactWebhookUrl(webhook.url),
  events: parseEvents(webhook.events),
  enabled: webhook.enabled === 1,
});

const webhookOf = async (stores: ConsoleDeps['stores'], projectId: string, webhookId: string): Promise<Webhook | undefined> =>
  (await stores.projects.listWebhooks(projectId)).find((candidate) => candidate.id === webhookId);

export const listWebhooks = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/webhooks',
  need: read('listing webhooks', 'list-webhooks'),
  run: async ({ project, stores }) => json({ webhooks: (await stores.projects.listWebhooks(project.id)).map(webhookAnswer) }),
});

export const addWebhook = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/webhooks',
  need: write('adding a webhook'),
  body: AddWebhookBody,
  run: async (context) => {
    const { project, body, now, stores } = context;
    const problem = webhookUrlProblem(body.url);
    if (problem) throw new InvalidInput(`url ${problem}`);
    const events = [...new Set(body.events)];
    const id = await stores.webhooks.addWebhook({ projectId: project.id, url: body.url, events, enabled: body.enabled, now });
    await recordChange(context, AUDIT_ACTIONS.addWebhook, { events: events.join(','), enabled: body.enabled }, { webhook_id: id });
    return json({ id, url_hint: redactWebhookUrl(body.url), events, enabled: body.enabled });
  },
});

export const editWebhook = defineConsoleRoute({
  method: 'PATCH',
  path: '/projects/{id}/webhooks/{webhook_id}',
  need: write('editing a webhook'),
  body: EditWebhookBody,
  run: async (context) => {
    const { project, body, params, now, stores } = context;
    const webhookId = params.webhook_id ?? '';
    const change = { ...(body.events ? { events: [...new Set(body.events)] } : {}), ...(body.enabled === undefined ? {} : { enabled: body.enabled }) };
    if (!(await stores.webhooks.updateWebhook(project.id, webhookId, change, now))) throw new WebhookNotFound(webhookId);
    await recordChange(
      context,
      AUDIT_ACTIONS.editWebhook,
      { webhook_id: webhookId },
      {
        ...(change.events ? { events: change.events.join(',') } : {}),
        ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
      },
    );
    const webhook = await webhookOf(stores, project.id, webhookId);
    if (!webhook) throw new WebhookNotFound(webhookId);
    return json(webhookAnswer(webhook));
  },
});

export const deleteWebhook = defineConsoleRoute({
  method: 'DELETE',
  path: '/projects/{id}/webhooks/{webhook_id}',
  need: write('deleting a webhook'),
  run: async (context) => {
    const webhookId = context.params.webhook_id ?? '';
    if (!(await context.stores.webhooks.deleteWebhook(context.project.id, webhookId))) throw new WebhookNotFound(webhookId);
    await recordChange(context, AUDIT_ACTIONS.deleteWebhook, { webhook_id: webhookId }, {});
    return NO_CONTENT;
  },
});

function describePost(outcome: { kind: string; status?: number; reason?: string }): string {
  return outcome.status !== undefined ? `HTTP ${outcome.status}` : (outcome.reason ?? outcome.kind);
}

export const testWebhook = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/webhooks/{webhook_id}/test',
  need: write('sending a test notification'),
  run: async (context) => {
    const { project, params, now, stores, deps } = context;
    const webhookId = params.webhook_id ?? '';
    const webhook = await webhookOf(stores, project.id, webhookId);
    const target = webhook && parseDiscordWebhookUrl(webhook.url);
    if (!target) throw new WebhookNotFound(webhookId);
    const outcome = await postEmbeds(executeWebhookUrl(deps.discordApiBase, target), testEmbedMessage(project.name, project.id, now));
    await recordChange(context, AUDIT_ACTIONS.testWebhook, { webhook_id: webhookId }, { outcome: outcome.kind });
    if (outcome.kind !== 'delivered') throw new InvalidInput(`Discord did not take the test (${describePost(outcome)}): check the webhook URL in Discord`);
    return json({ ok: true });
  },
});
