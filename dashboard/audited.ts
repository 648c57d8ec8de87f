import { AUDIT_ACTIONS, type AuditAction, type AuditDetails, type AuditSubject, dashboardEntry } from '#domain/audit';
import type { Command } from './command';
import { oneLine } from './context';

/** What a dashboard write enters in the trail: one entry per subject it changed, ids and counts only. */
export interface DashboardAudit<Input, Result> {
  action: AuditAction;
  entries(input: Input, result: Result): { subject: AuditSubject; target: AuditDetails; outcome: AuditDetails }[];
}

/**
 * The command, each successful run entered in the audit trail with the identity that ran it (context.caller). The
 * entry follows the change, so bad input still writes nothing; an entry that cannot be written leaves the change
 * (and the answer, raw keys included, which exist nowhere else) as it is and says so on stderr.
 */
export function audited<Input, Result extends object>(command: Command<Input, Result>, audit: DashboardAudit<Input, Result>): Command<Input, Result> {
  return {
    ...command,
    async run(context, input) {
      // Asked first: a command whose caller cannot be named is not run.
      const caller = await context.caller();
      const result = await command.run(context, input);
      const at = context.now();
      for (const { subject, target, outcome } of audit.entries(input, result)) {
        const entry = dashboardEntry({ ...subject, at, action: audit.action, target, outcome, caller });
        await context.stores.audit.record(entry).catch((error: unknown) => {
          context.warn(
            `${command.name} is done, but its audit entry (${audit.action} ${JSON.stringify({ ...subject, ...target, ...outcome })}) could not be written: ${oneLine(error)}`,
          );
        });
      }
      return result;
    },
  };
}

/** The dashboard's writes and what each enters: never a raw key, a webhook URL (its token is a secret) or a token. */
export const DASHBOARD_AUDITS = {
  keysIssue: {
    action: AUDIT_ACTIONS.issueKeys,
    entries: (input: { projectId: string }, result: { keys: readonly { id: string }[] }) => [
      { subject: { projectId: input.projectId }, target: {}, outcome: { issued_count: result.keys.length, first_key_id: result.keys[0]?.id ?? null } },
    ],
  },
  webhooksAdd: {
    action: AUDIT_ACTIONS.addWebhook,
    entries: (input: { projectId: string; events: readonly string[]; enabled: boolean }, result: { id: string }) => [
      { subject: { projectId: input.projectId }, target: { events: input.events.join(','), enabled: input.enabled }, outcome: { webhook_id: result.id } },
    ],
  },
  versionsUpload: {
    action: AUDIT_ACTIONS.uploadVersion,
    entries: (input: { projectId: string }, result: { id: string; version_number: number }) => [
      { subject: { projectId: input.projectId }, target: {}, outcome: { version_id: result.id, version_number: result.version_number } },
    ],
  },
  discordLink: {
    action: AUDIT_ACTIONS.linkDiscord,
    entries: (input: { projectId: string; publicKey: string; applicationId?: string }, result: { reset_cooldown: number }) => [
      {
        subject: { projectId: input.projectId },
        target: { public_key: input.publicKey.toLowerCase(), application_id: input.applicationId ?? null },
        outcome: { reset_cooldown: result.reset_cooldown },
      },
    ],
  },
  discordUnlink: {
    action: AUDIT_ACTIONS.unlinkDiscord,
    entries: (input: { projectId: string }) => [{ subject: { projectId: input.projectId }, target: {}, outcome: { unlinked: true } }],
  },
  shopAdd: {
    action: AUDIT_ACTIONS.shopAdd,
    // The secret is never entered: only the provider and which products are mapped.
    entries: (input: { projectId: string; provider: string; products: Record<string, string> }, result: { connection_id: string }) => [
      {
        subject: { projectId: input.projectId },
        target: { provider: input.provider, products: Object.keys(input.products).join(',') },
        outcome: { connection_id: result.connection_id },
      },
    ],
  },
  shopMap: {
    action: AUDIT_ACTIONS.shopMap,
    entries: (_input: unknown, result: { connection_id: string; project_id: string; products: Record<string, string> }) => [
      {
        subject: { projectId: result.project_id },
        target: { connection_id: result.connection_id },
        outcome: { products: Object.keys(result.products).join(',') },
      },
    ],
  },
  shopRemove: {
    action: AUDIT_ACTIONS.shopRemove,
    entries: (_input: unknown, result: { connection_id: string; project_id: string }) => [
      { subject: { projectId: result.project_id }, target: { connection_id: result.connection_id }, outcome: { removed: true } },
    ],
  },
  tokenMigrate: {
    action: AUDIT_ACTIONS.migrateToken,
    entries: (_input: unknown, result: { tokens: readonly { ownerId: string; tokenId: string; scope: string }[] }) =>
      result.tokens.map((token) => ({ subject: { ownerId: token.ownerId }, target: { token_id: token.tokenId }, outcome: { scope: token.scope } })),
  },
} as const;
