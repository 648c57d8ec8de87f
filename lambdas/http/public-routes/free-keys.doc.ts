import { FREE_SESSION_LIMITS, MIN_CHECKPOINT_SECONDS, PROVIDER_TIMEOUT_MS } from '#domain/free-keys/session';
import { EXAMPLE } from '#http/openapi/examples';
import { headerRef, type Operation, responseRef } from '#http/openapi/types';

/** The OpenAPI operations of the key page (free-keys.ts); the document alone imports them, never a Lambda bundle. */

const html = (description: string) => ({
  description,
  content: { 'text/html; charset=utf-8': { schema: { type: 'string' }, examples: { page: { summary: 'The page (its start)', value: '<!doctype html>…' } } } },
});
const projectParameter = {
  name: 'project_id',
  in: 'path' as const,
  required: true,
  description: 'The project (the script id).',
  schema: { type: 'string' },
  example: EXAMPLE.projectId,
};

export const freeStartDoc = (): Operation => ({
  operationId: 'getFreeKeyPage',
  tags: ['Free keys'],
  summary: 'The key page: start the checkpoints for this machine',
  description: `A page for people (HTML, no script). Starts a session bound to the machine \`m\` and the client's address and links to checkpoint 1 (docs/free-keys.md). At most ${FREE_SESSION_LIMITS.perAddressPerHour} sessions an hour per address and ${FREE_SESSION_LIMITS.perMachinePerHour} per machine, per project.`,
  security: [],
  parameters: [
    projectParameter,
    {
      name: 'm',
      in: 'query',
      required: true,
      description: "The machine's fingerprint as the loader computes it: 64 lowercase hex.",
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
  ],
  responses: {
    200: html('Checkpoint 1, with a link to it; sets the session cookie.'),
    400: html('`m` is not 64 lowercase hex.'),
    404: html('The project hands out no free keys.'),
    429: { ...html('Too many sessions from this address or machine.'), headers: { 'Retry-After': headerRef('Retry-After') } },
    500: responseRef('InternalError'),
  },
});

export const freeReturnDoc = (): Operation => ({
  operationId: 'returnFromCheckpoint',
  tags: ['Free keys'],
  summary: 'Where a checkpoint provider sends the buyer back',
  description: `Verifies the return with the provider's API (Work.ink token, Linkvertise hash, Lootlabs postback), single use, for this link and address, no sooner than ${MIN_CHECKPOINT_SECONDS.workink} s after the buyer was sent; then the next checkpoint, or the key (shown once). A refused return offers the checkpoint again and counts as a bypass attempt; a provider that does not answer in ${PROVIDER_TIMEOUT_MS} ms gets a 503 page and nothing is issued.`,
  security: [],
  parameters: [
    projectParameter,
    { name: 's', in: 'query', required: false, description: 'The session (else the session cookie).', schema: { type: 'string', pattern: '^[0-9a-f]{32}$' } },
    { name: 'token', in: 'query', required: false, description: "Work.ink's `{TOKEN}`.", schema: { type: 'string' } },
    { name: 'hash', in: 'query', required: false, description: "Linkvertise's anti-bypass hash (64 characters).", schema: { type: 'string' } },
  ],
  responses: {
    200: html('The next checkpoint, or the key.'),
    403: html('The checkpoint was not completed (a bypass attempt); it is offered again.'),
    404: html('The project hands out no free keys.'),
    410: html('The session expired or is unknown.'),
    429: html("This machine already got today's free keys."),
    503: { ...html('The provider did not answer; nothing was issued.'), headers: { 'Retry-After': headerRef('Retry-After') } },
    500: responseRef('InternalError'),
  },
});

export const freePostbackDoc = (): Operation => ({
  operationId: 'lootlabsPostback',
  tags: ['Free keys'],
  summary: "Lootlabs' postback for a completed checkpoint",
  description:
    "Called by Lootlabs, server to server, when a buyer completes a Lootlabs checkpoint (https://help.lootlabs.gg/en/article/postback-api-1ndz3i2). Lootlabs does not sign it, so the URL pasted into Lootlabs carries the checkpoint's `secret`; `click_id` is the `puid` the key page put on the link (the session's nonce).",
  security: [],
  parameters: [
    projectParameter,
    { name: 'secret', in: 'query', required: true, description: "The Lootlabs checkpoint's secret, as set with `free set`.", schema: { type: 'string' } },
    { name: 'click_id', in: 'query', required: true, description: 'The `puid` the link carried.', schema: { type: 'string' } },
    { name: 'ip', in: 'query', required: true, description: 'The address that completed the link.', schema: { type: 'string' } },
    { name: 'unique_id', in: 'query', required: true, description: "Lootlabs' id of the completion (single use).", schema: { type: 'string' } },
  ],
  responses: {
    200: {
      description: 'Recorded.',
      content: { 'application/json': { schema: { type: 'object' }, examples: { answer: { summary: 'The answer', value: { ok: true } } } } },
    },
    400: {
      description: 'A value is missing or malformed.',
      content: {
        'application/json': {
          schema: { type: 'object' },
          examples: { answer: { summary: 'The answer', value: { error: 'click_id, ip and unique_id are required' } } },
        },
      },
    },
    401: {
      description: 'Unknown project or secret.',
      content: {
        'application/json': {
          schema: { type: 'object' },
          examples: { answer: { summary: 'The answer', value: { error: 'Unknown project or postback secret' } } },
        },
      },
    },
    500: responseRef('InternalError'),
  },
});
