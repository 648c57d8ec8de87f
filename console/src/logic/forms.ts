/**
 * The console's forms, checked before anything is sent, with the server's own rules (DESIGN.md "Selling keys",
 * "Script delivery"): a mistake is named beside its field at once, and the server still checks everything again.
 */

export const DURATIONS = ['1d', '7d', '30d', '90d', '365d', 'lifetime'] as const;
export type Duration = (typeof DURATIONS)[number];
export const DURATION_LABELS: Record<Duration, string> = {
  '1d': '1 day',
  '7d': '7 days',
  '30d': '30 days',
  '90d': '90 days',
  '365d': '365 days',
  lifetime: 'Lifetime',
};

export const MAX_ISSUE_COUNT = 100;
export const MAX_NOTE_LENGTH = 255;
export const MAX_MACHINES = 10;
const DISCORD_ID = /^\d{17,20}$/;

/** The Issue keys form as typed: every field a string, blank meaning "not set". */
export interface IssueFormFields {
  count: string;
  duration: string;
  maxUses: string;
  maxMachines: string;
  note: string;
  discordId: string;
}

/** The body of `POST …/keys` (DESIGN.md "Selling keys"). */
export interface IssueKeysBody {
  count: number;
  duration: Duration;
  max_uses: number | null;
  max_fingerprints: number | null;
  note?: string;
  discord_id?: string;
}

export type FormResult<T, F extends string> = { ok: true; body: T } | { ok: false; errors: Partial<Record<F, string>> };

function wholeNumber(text: string): number | undefined {
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

function isDuration(value: string): value is Duration {
  return (DURATIONS as readonly string[]).includes(value);
}

export function validateIssueForm(fields: IssueFormFields): FormResult<IssueKeysBody, keyof IssueFormFields> {
  const errors: Partial<Record<keyof IssueFormFields, string>> = {};
  const count = wholeNumber(fields.count);
  if (count === undefined || count < 1 || count > MAX_ISSUE_COUNT) errors.count = `Count is a whole number from 1 to ${MAX_ISSUE_COUNT}`;
  if (!isDuration(fields.duration)) errors.duration = `Duration is one of ${DURATIONS.join(', ')}`;
  const maxUses = fields.maxUses.trim() === '' ? null : wholeNumber(fields.maxUses);
  if (maxUses === undefined || maxUses === 0) errors.maxUses = 'Max uses is a whole number of at least 1, or blank for no cap';
  const maxMachines = fields.maxMachines.trim() === '' ? null : wholeNumber(fields.maxMachines);
  if (maxMachines === undefined || (maxMachines !== null && (maxMachines < 1 || maxMachines > MAX_MACHINES)))
    errors.maxMachines = `Max machines is a whole number from 1 to ${MAX_MACHINES}, or blank to bind none`;
  if (fields.note.length > MAX_NOTE_LENGTH) errors.note = `Note is at most ${MAX_NOTE_LENGTH} characters (this one has ${fields.note.length})`;
  const discordId = fields.discordId.trim();
  if (discordId !== '' && !DISCORD_ID.test(discordId)) errors.discordId = 'Discord ID is 17 to 20 digits (a Discord user id, not a name)';
  if (Object.keys(errors).length > 0 || count === undefined || maxUses === undefined || maxMachines === undefined || !isDuration(fields.duration))
    return { ok: false, errors };
  return {
    ok: true,
    body: {
      count,
      duration: fields.duration,
      max_uses: maxUses,
      max_fingerprints: maxMachines,
      ...(fields.note !== '' ? { note: fields.note } : {}),
      ...(discordId !== '' ? { discord_id: discordId } : {}),
    },
  };
}

/** The key edit form (`PATCH …/keys/{key_id}`): blank clears a field, as null does in the API. */
export interface EditKeyFields {
  note: string;
  discordId: string;
  maxUses: string;
  maxMachines: string;
}

export interface EditKeyBody {
  note: string | null;
  discord_id: string | null;
  max_uses: number | null;
  max_fingerprints: number | null;
}

export function validateEditKeyForm(fields: EditKeyFields): FormResult<EditKeyBody, keyof EditKeyFields> {
  const errors: Partial<Record<keyof EditKeyFields, string>> = {};
  const maxUses = fields.maxUses.trim() === '' ? null : wholeNumber(fields.maxUses);
  if (maxUses === undefined || maxUses === 0) errors.maxUses = 'Max uses is a whole number of at least 1, or blank for no cap';
  const maxMachines = fields.maxMachines.trim() === '' ? null : wholeNumber(fields.maxMachines);
  if (maxMachines === undefined || (maxMachines !== null && (maxMachines < 1 || maxMachines > MAX_MACHINES)))
    errors.maxMachines = `Max machines is a whole number from 1 to ${MAX_MACHINES}, or blank to bind none`;
  if (fields.note.length > MAX_NOTE_LENGTH) errors.note = `Note is at most ${MAX_NOTE_LENGTH} characters (this one has ${fields.note.length})`;
  const discordId = fields.discordId.trim();
  if (discordId !== '' && !DISCORD_ID.test(discordId)) errors.discordId = 'Discord ID is 17 to 20 digits (a Discord user id, not a name)';
  if (Object.keys(errors).length > 0 || maxUses === undefined || maxMachines === undefined) return { ok: false, errors };
  return {
    ok: true,
    body: { note: fields.note === '' ? null : fields.note, discord_id: discordId === '' ? null : discordId, max_uses: maxUses, max_fingerprints: maxMachines },
  };
}

/** A script file under the rules of `versions upload`: 1 byte to 5 MiB of UTF-8. */
export const MAX_SCRIPT_BYTES = 5 * 1024 * 1024;

/** Why a script file cannot be a version, or null when it can. */
export function scriptFileProblem(bytes: Uint8Array): string | null {
  if (bytes.byteLength === 0) return 'The script file is empty: choose a file of at least 1 byte';
  if (bytes.byteLength > MAX_SCRIPT_BYTES)
    return `The script file is ${bytes.byteLength} bytes, more than the 5 MiB (${MAX_SCRIPT_BYTES} bytes) a version may hold`;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'The script file is not valid UTF-8 text: save it as UTF-8 and choose it again';
  }
  return null;
}

export function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** A ban's reason, 1 to 200 characters (DESIGN.md "Key lifecycle"). */
const MAX_BAN_REASON = 200;

export function banReasonProblem(reason: string): string | null {
  if (reason.trim() === '') return 'Reason is required: the buyer sees it when their key is refused';
  if (reason.length > MAX_BAN_REASON) return `Reason is at most ${MAX_BAN_REASON} characters (this one has ${reason.length})`;
  return null;
}
