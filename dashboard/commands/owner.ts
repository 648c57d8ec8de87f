import type { Command } from '#dashboard/command';
import { newTokenFor } from './tokens';

/** `owner create`: a new owner and its first token, which writes (the token is in the answer, this once). */
export const ownerCreate: Command<Record<string, never>, { ownerId: string; token: string; tokenId: string }> = {
  name: 'owner create',
  flags: {},
  validate: () => ({}),
  run: (context) => newTokenFor(context, undefined, 'write'),
};
