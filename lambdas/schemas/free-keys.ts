import * as z from 'zod/mini';

/**
 * Free keys behind checkpoints (DESIGN.md, "Free keys behind checkpoints"; docs/free-keys.md): a project's settings.
 * The same schema reads the dashboard CLI's input, the console's body and the stored item.
 */

const FREE_PROVIDERS = ['workink', 'linkvertise', 'lootlabs'] as const;
export type FreeProvider = (typeof FREE_PROVIDERS)[number];

/** Bounds of the settings (docs/limits.md). */
export const FREE_SETTINGS_BOUNDS = {
  checkpoints: { min: 1, max: 5 },
  durationHours: { min: 1, max: 72, default: 24 },
  machines: { min: 1, max: 10, default: 1 },
  keysPerMachinePerDay: { min: 1, max: 24, default: 1 },
} as const;

/** A link id or an API secret: printable ASCII without spaces, as the providers issue them. */
const PROVIDER_TEXT = /^[\x21-\x7e]{1,200}$/;

const providerText = (field: string) =>
  z.string({ error: `${field} is required` }).check(z.regex(PROVIDER_TEXT, `${field} must be 1 to 200 printable characters without spaces`));

export const Checkpoint = z.object({
  provider: z.enum(FREE_PROVIDERS, { error: `provider must be one of ${FREE_PROVIDERS.join(', ')}` }),
  /** The link the buyer is sent to (https): the provider's page of the publisher's link. */
  url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL of the provider link' }),
  /**
   * The publisher's link id as the provider's verification names it (Work.ink `info.linkId`); for Linkvertise and
   * Lootlabs, whose checks name no link, the publisher's own label of the link.
   */
  link_id: providerText('link_id'),
  /** The provider's API secret or token (Linkvertise API token; Lootlabs postback secret; Work.ink needs none but may hold one). */
  secret: providerText('secret'),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

const bounded = (field: string, bounds: { min: number; max: number; default: number }) =>
  z._default(
    z
      .int({ error: `${field} must be a whole number` })
      .check(z.gte(bounds.min, `${field} must be at least ${bounds.min}`), z.lte(bounds.max, `${field} must be at most ${bounds.max}`)),
    bounds.default,
  );

export const FreeKeySettings = z.object({
  enabled: z._default(z.boolean({ error: 'enabled must be true or false' }), true),
  checkpoints: z
    .array(Checkpoint)
    .check(
      z.minLength(FREE_SETTINGS_BOUNDS.checkpoints.min, `checkpoints must hold at least ${FREE_SETTINGS_BOUNDS.checkpoints.min}`),
      z.maxLength(FREE_SETTINGS_BOUNDS.checkpoints.max, `checkpoints must hold at most ${FREE_SETTINGS_BOUNDS.checkpoints.max}`),
    ),
  duration_hours: bounded('duration_hours', FREE_SETTINGS_BOUNDS.durationHours),
  machines: bounded('machines', FREE_SETTINGS_BOUNDS.machines),
  keys_per_machine_per_day: bounded('keys_per_machine_per_day', FREE_SETTINGS_BOUNDS.keysPerMachinePerDay),
});
export type FreeKeySettings = z.infer<typeof FreeKeySettings>;

/** The settings with each secret left out: what `free show` and the console answer (secrets are never shown again). */
export type FreeKeySettingsView = Omit<FreeKeySettings, 'checkpoints'> & { checkpoints: Omit<Checkpoint, 'secret'>[] };
export const viewOf = (settings: FreeKeySettings): FreeKeySettingsView => ({
  ...settings,
  checkpoints: settings.checkpoints.map(({ provider, url, link_id }) => ({ provider, url, link_id })),
});

/** The first problem of an input, as one sentence naming the field (zod's path plus its message). */
export function freeSettingsProblem(input: unknown): string | undefined {
  const parsed = FreeKeySettings.safeParse(input);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 1 ? `${issue.path.join('.')}: ` : '';
  return `${where}${issue?.message ?? 'settings are malformed'}`;
}
