import type { SecretSealer } from '#domain/ports';
import { FreeKeySettings } from '#schemas/free-keys';

/**
 * Provider secrets are stored sealed (docs/security.md, "Free keys"), with the project id as the sealer's context, so
 * a sealed secret copied to another project's item does not open (the sealer: lambdas/adapters/secret-sealer.ts).
 */

/** The settings with every checkpoint's secret sealed (what the table holds), and back. */
export async function sealSettings(sealer: SecretSealer, projectId: string, settings: FreeKeySettings): Promise<FreeKeySettings> {
  const checkpoints = await Promise.all(settings.checkpoints.map(async (c) => ({ ...c, secret: await sealer.seal(c.secret, projectId) })));
  return { ...settings, checkpoints };
}
export async function openSettings(sealer: SecretSealer, projectId: string, stored: FreeKeySettings): Promise<FreeKeySettings> {
  const checkpoints = await Promise.all(stored.checkpoints.map(async (c) => ({ ...c, secret: await sealer.open(c.secret, projectId) })));
  // Parsed again once open: what the table held is read as input, never trusted as already valid.
  return FreeKeySettings.parse({ ...stored, checkpoints });
}
