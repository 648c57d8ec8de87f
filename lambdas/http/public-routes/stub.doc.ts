import { PROJECT_NOT_FOUND, RateLimited } from '#domain/errors';
import { UNSIGNED_REFUSALS, UNSIGNED_REFUSALS_MESSAGE } from '#domain/unsigned-refusals';
import { STUB_MAX_AGE_SECONDS } from '#http/loader-stub';
import { EXAMPLE } from '#http/openapi/examples';
import { errorContent, errorExamples } from '#http/openapi/responses';
import { headerRef, type Operation, responseRef } from '#http/openapi/types';

/** The OpenAPI operation of STUB_ROUTE (stub.ts); the document alone imports it, never a Lambda bundle. */
export const stubDoc = (): Operation => ({
  operationId: 'getStubLoader',
  tags: ['Loader'],
  summary: "The project's hosted stub loader",
  description:
    'What buyers run, with no bearer token: `script_key = "KEY"` and then `loadstring(game:HttpGet("<this URL>"))()`. The stub loader (`examples/roblox-loader.luau`) with its settings naming this project and the loader routes\' base URL (the one this request came through); it reads the global `script_key` and fetches the script with `POST /v1/loader/script`. The same for every buyer of the project: `Cache-Control: public`, a strong `ETag`, and 304 for `If-None-Match` equal to it.',
  security: [],
  parameters: [
    { name: 'project_id', in: 'path', required: true, description: 'The project (the script id).', schema: { type: 'string' }, example: EXAMPLE.projectId },
    {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'The `ETag` of the copy the client holds.',
      schema: { type: 'string' },
      example: '"0b6f3c1e9a7d2f4058e1c3b7a9d6f201"',
    },
  ],
  responses: {
    200: {
      description: `The stub loader, as text. \`Cache-Control: public, max-age=${STUB_MAX_AGE_SECONDS}\`.`,
      headers: { ETag: headerRef('ETag') },
      content: {
        'text/plain; charset=utf-8': {
          schema: { type: 'string' },
          examples: { stub: { summary: 'The stub (its start)', value: '--[[\n  Stub loader ...' } },
        },
      },
    },
    304: { description: 'The copy named by `If-None-Match` is current: no body.', headers: { ETag: headerRef('ETag') } },
    404: { description: 'No such project.', content: errorContent({ none: { summary: 'Unknown project', value: { error: PROJECT_NOT_FOUND } } }) },
    429: {
      description: `Past ${UNSIGNED_REFUSALS.perAddressPerMinute} unknown projects a minute from this client address (an IPv6 client is its /64); a known project's stub is never refused. Wait \`Retry-After\` seconds.`,
      headers: { 'Retry-After': headerRef('Retry-After') },
      content: errorContent(errorExamples([{ summary: 'Too many unknown projects from one address', error: new RateLimited(42, UNSIGNED_REFUSALS_MESSAGE) }])),
    },
    500: responseRef('InternalError'),
  },
});
