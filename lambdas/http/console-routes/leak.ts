import { revokeBulkAudited } from '#domain/project-api';
import { LeakRevokeBody } from '#schemas/console';
import { defineConsoleRoute, json, write } from '../console-route';

/**
 * The Leak page's bulk revoke of the watermarks a trace named (the trace itself is the owner route `leak/trace`,
 * through the console's mirror): `sdapi leak` in the browser.
 */

export const revokeLeak = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/leak/revoke',
  need: write('revoking keys by watermark', 'revoke-bulk'),
  body: LeakRevokeBody,
  run: async ({ project, body, now, trail, stores, timeLeftMs }) => {
    const results = [];
    for (const watermark of new Set(body.watermarks)) {
      const result = await revokeBulkAudited(stores.projects, project, watermark, now, timeLeftMs, trail);
      results.push({ watermark, revoked_count: result.revoked_count, complete: result.complete });
    }
    return json({ results });
  },
});
