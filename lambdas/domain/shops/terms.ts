import { type KeyDuration, MAX_FINGERPRINTS, MAX_KEYS_PER_API_ISSUE, parseDuration } from '#schemas/requests';

/**
 * A shop product's key terms (DESIGN.md, "Shops deliver keys by themselves"): `TERMS` is a duration of "Selling keys"
 * (`30d`, `lifetime`, whole seconds) optionally followed by `,machines=N`, `,uses=N`, `,keys=N` (keys per unit
 * bought, default 1), e.g. `30d,machines=1`.
 */
export interface ShopTerms {
  duration: KeyDuration;
  maxFingerprints: number | null;
  maxUses: number | null;
  keysPerUnit: number;
}

/** Keys one order item may issue: one issue's limit (quantity × keys per unit is one `POST …/keys` with its order id). */
export const MAX_KEYS_PER_ORDER_ITEM = MAX_KEYS_PER_API_ISSUE;

const OPTIONS = {
  machines: { field: 'maxFingerprints', min: 1, max: MAX_FINGERPRINTS },
  uses: { field: 'maxUses', min: 1, max: Number.MAX_SAFE_INTEGER },
  keys: { field: 'keysPerUnit', min: 1, max: MAX_KEYS_PER_ORDER_ITEM },
} as const;

/** The terms `text` names, or a sentence saying what is wrong with it. */
export function parseTerms(text: string): ShopTerms | string {
  const [durationText = '', ...options] = text.split(',');
  const asNumber = /^\d+$/.test(durationText) ? Number(durationText) : durationText;
  const duration = parseDuration(asNumber);
  if (duration === undefined) return `"${durationText}" is no duration: use 1d, 7d, 30d, 90d, 365d, lifetime or whole seconds from 60 to 315360000`;
  const terms: ShopTerms = { duration, maxFingerprints: null, maxUses: null, keysPerUnit: 1 };
  const seen = new Set<string>();
  for (const option of options) {
    const match = /^(machines|uses|keys)=(\d{1,16})$/.exec(option);
    if (!match?.[1] || !match[2]) return `"${option}" is no option: use machines=N, uses=N or keys=N`;
    const name = match[1] as keyof typeof OPTIONS;
    if (seen.has(name)) return `${name} is given twice`;
    seen.add(name);
    const { field, min, max } = OPTIONS[name];
    const value = Number(match[2]);
    if (value < min || value > max) return `${name} must be from ${min} to ${max}`;
    terms[field] = value;
  }
  return terms;
}
