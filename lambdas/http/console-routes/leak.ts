import { revokeBulkAudited } from '#domain/project-api';
import { WatermarkScanner } from '#domain/watermark-scan';
import { LeakFindBody, LeakRevokeBody } from '#schemas/console';
import { defineConsoleRoute, json, read, write } from '../console-route';

/** A pasted dump's watermarks with their active keys, and a bulk revoke of each: `sdapi leak` in the browser. */

export const findLeak = defineConsoleRoute({
  method: 'POST',
  path: '/projects/{id}/leak/find',
  need: read('finding leaked watermarks', 'list-keys'),
  body: LeakFindBody,
  run: async ({ project, body, stores }) => {
    const scanner = new WatermarkScanner();
    scanner.push(new TextEncoder().encode(body.text));
    const watermarks = [...scanner.finish().watermarks.keys()].slice(0, 100);
    const counted = await Promise.all(
      watermarks.map(async (watermark) => {
        let active = 0;
        for await (const page of stores.projects.activeKeyIdsWithWatermark(project.id, watermark)) active += page.length;
        return { watermark, active_keys: active };
      }),
    );
    return json({ watermarks: counted });
  },
});

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
