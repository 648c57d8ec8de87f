import { randomBytes } from 'node:crypto';

/** Ids say what they name (`prj_…`, `key_…`), so a key id pasted where a version id belongs reads wrong at once. */
export type IdPrefix = 'own' | 'prj' | 'key' | 'ver' | 'whk' | 'evt' | 'aud';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}
