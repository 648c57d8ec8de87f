import { randomBytes } from 'node:crypto';

/** Ids say what they name (`prj_…`, `key_…`), so a key id pasted where a version id belongs reads wrong at once. */
export type IdPrefix = 'own' | 'prj' | 'key' | 'ver' | 'whk' | 'evt' | 'aud';

/** How every id of a kind begins (`prj_`). */
export const idStart = (prefix: IdPrefix): string => `${prefix}_`;

export function newId(prefix: IdPrefix): string {
  return `${idStart(prefix)}${randomBytes(10).toString('hex')}`;
}
