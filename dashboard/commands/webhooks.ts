import { UsageError } from '#dashboard/args';
import type { Command } from '#dashboard/command';
import { DISCORD_WEBHOOK_URL_FORM, webhookUrlProblem } from '#domain/webhooks/discord-webhook-url';
import { EVENT_NAMES, type EventName } from '#schemas/resources';
import { projectId, requireProject } from './input';

function webhookUrl(text: string): string {
  const problem = webhookUrlProblem(text);
  if (problem) throw new UsageError(`--url ${problem}`);
  return text;
}

/** `e1,e2` → the distinct event names, in the order given. */
function eventList(text: string): EventName[] {
  const names = text.split(',').map((name) => name.trim());
  if (names.some((name) => name === '')) throw new UsageError(`--events must be a comma-separated list of ${EVENT_NAMES.join(', ')}; got "${text}"`);
  const unknown = names.filter((name) => !(EVENT_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new UsageError(`Unknown event ${unknown.map((n) => `"${n}"`).join(', ')} in --events; events: ${EVENT_NAMES.join(', ')}`);
  return [...new Set(names as EventName[])];
}

/** `webhooks add`: a Discord webhook of a project, for the events named (its URL is a secret: never printed or audited). */
export const webhooksAdd: Command<{ projectId: string; url: string; events: EventName[]; enabled: boolean }, { id: string }> = {
  name: 'webhooks add',
  flags: {
    project: { required: true, placeholder: 'ID' },
    url: { required: true, placeholder: DISCORD_WEBHOOK_URL_FORM },
    events: { required: true, placeholder: 'e1,e2' },
    disabled: { kind: 'switch' },
  },
  validate: (flags) => ({
    projectId: projectId(flags),
    url: webhookUrl(flags.required('url')),
    events: eventList(flags.required('events')),
    enabled: !flags.switch('disabled'),
  }),
  async run(context, input) {
    await requireProject(context, input.projectId);
    return { id: await context.stores.dashboard.addWebhook({ ...input, now: context.now() }) };
  },
};
