import { AUDIT_ACTIONS } from '#domain/audit';
import { linkDiscord, unlinkDiscord } from '#domain/discord/link';
import { ProjectNotFound } from '#domain/errors';
import type { DiscordLink } from '#domain/ports';
import { DiscordLinkBody } from '#schemas/console';
import { defineConsoleRoute, json, NO_CONTENT, read, recordChange, write } from '../console-route';
import { interactionsUrlOf, stubUrlOf } from '../public-routes';

/** The session's projects, and what a project hands buyers and Discord: the loader line and the Discord link. */

export const listProjects = defineConsoleRoute({
  method: 'GET',
  path: '/projects',
  need: read('listing projects'),
  everySession: true,
  run: async ({ stores, session, caller }) => {
    const projects = (await stores.reads.projectsOf(session.ownerId)).filter((project) => caller.projectId === undefined || project.id === caller.projectId);
    return json({ projects: projects.map(({ id, name, plan }) => ({ id, name, plan })) });
  },
});

export const loaderLine = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/loader',
  need: read('showing the loader line'),
  run: async ({ project, deps }) => {
    const stubUrl = stubUrlOf(deps.loaderBaseUrl, project.id);
    return json({ stub_url: stubUrl, line: `script_key = "KEY"\nloadstring(game:HttpGet("${stubUrl}"))()` });
  },
});

/** A project's Discord link as the console shows it; every field null while the project has none. */
function discordLinkAnswer(link: DiscordLink | undefined, loaderBaseUrl: string, projectId: string) {
  return {
    public_key: link?.publicKey ?? null,
    application_id: link?.applicationId ?? null,
    reset_cooldown: link?.resetCooldown ?? null,
    interactions_url: link ? interactionsUrlOf(loaderBaseUrl, projectId) : null,
  };
}

// The project's Discord application (DESIGN.md, "Buyers help themselves in Discord"), as `discord link` and
// `discord unlink` set it: the interactions URL to paste into Discord's developer portal, the key and the cooldown.
export const getDiscordLink = defineConsoleRoute({
  method: 'GET',
  path: '/projects/{id}/discord',
  need: read('reading the Discord link'),
  run: async ({ project, stores, deps }) => json(discordLinkAnswer(await stores.discord.discordLink(project.id), deps.loaderBaseUrl, project.id)),
});

export const putDiscordLink = defineConsoleRoute({
  method: 'PUT',
  path: '/projects/{id}/discord',
  need: write('linking Discord'),
  body: DiscordLinkBody,
  run: async (context) => {
    const { project, body, stores, deps, now } = context;
    const linkRequest = {
      publicKey: body.public_key,
      ...(body.application_id === undefined ? {} : { applicationId: body.application_id }),
      ...(body.reset_cooldown === undefined ? {} : { resetCooldown: body.reset_cooldown }),
    };
    const link = await linkDiscord(stores.discord, project.id, linkRequest, now);
    if (!link) throw new ProjectNotFound();
    // The entry the dashboard's `discord link` writes (dashboard/audited.ts), with the console as its source.
    await recordChange(
      context,
      AUDIT_ACTIONS.linkDiscord,
      { public_key: link.publicKey, application_id: link.applicationId },
      { reset_cooldown: link.resetCooldown },
    );
    return json(discordLinkAnswer(link, deps.loaderBaseUrl, project.id));
  },
});

export const deleteDiscordLink = defineConsoleRoute({
  method: 'DELETE',
  path: '/projects/{id}/discord',
  need: write('unlinking Discord'),
  run: async (context) => {
    if (!(await unlinkDiscord(context.stores.discord, context.project.id))) throw new ProjectNotFound();
    await recordChange(context, AUDIT_ACTIONS.unlinkDiscord, {}, { unlinked: true });
    return NO_CONTENT;
  },
});
