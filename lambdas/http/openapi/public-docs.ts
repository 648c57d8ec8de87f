import type { PublicRoute } from '#http/public-routes';
import { freePostbackDoc, freeReturnDoc, freeStartDoc } from '#http/public-routes/free-keys.doc';
import { scriptDoc } from '#http/public-routes/script.doc';
import { stubDoc } from '#http/public-routes/stub.doc';
import { validateDoc } from '#http/public-routes/validate.doc';
import type { Operation } from './types';

/**
 * The public routes' OpenAPI operations, each in `public-routes/<name>.doc.ts` beside its route and reached only from
 * the document, never from a Lambda. Discord's route has none: Discord calls it, not a client of the API.
 */
export const PUBLIC_DOCS: Partial<Record<PublicRoute['entry'], () => Operation>> = {
  'loader-validate': validateDoc,
  'loader-script': scriptDoc,
  'loader-stub': stubDoc,
  'free-start': freeStartDoc,
  'free-return': freeReturnDoc,
  'free-postback': freePostbackDoc,
};
