import { InvalidInput } from '#domain/errors';
import { dumpProblem, MAX_DUMP_BYTES } from '#domain/leak-trace';
import { EXAMPLE } from '#http/openapi/examples';
import type { OperationDoc } from '#http/openapi/operation-doc';
import { TraceLeakResponse } from '#schemas/responses';

/** The OpenAPI operation of trace-leak (its route: trace-leak.ts); the document alone imports it, never a Lambda bundle. */
export const traceLeakDoc = (): OperationDoc => ({
  operationId: 'traceLeak',
  tag: 'Keys',
  summary: 'Trace a leaked script dump to its keys',
  description: `Reads a leaked dump (the body, as text, 1 byte to ${MAX_DUMP_BYTES} bytes) for the watermarks it names: every visible \`WM_\` marker (16 lowercase hex; a marker no key carries is listed with \`keys: []\`), and the hidden mark every served script carries in the whitespace between its tokens, which survives the \`--WM_\` line deleted, every marker removed, line endings changed, trailing whitespace trimmed, space runs collapsed and all but any half of the script cut away. A hidden reading is reported only when its check (keyed by one of the project's versions) holds; \`agreement\` is the share of its places that agree. Revoke a named watermark with \`keys/revoke-bulk\`. Not in the spec: see docs/script-delivery.md.`,
  requestBody: {
    name: 'LeakDump',
    description: 'The leaked text, as found (other text around it is fine).',
    examples: { dump: { summary: 'A dump whose first line was deleted', value: 'local K={"abc","def"};print(K[1]..K[2])\n' } },
  },
  ok: {
    name: 'TraceLeakResponse',
    schema: TraceLeakResponse,
    description: 'The watermarks the dump names, visible markers first, each with the keys carrying it.',
    example: {
      found: [{ watermark: EXAMPLE.watermark, mark: 'hidden', version_id: EXAMPLE.versionId, agreement: 1, keys: [{ id: EXAMPLE.keyId, revoked: 0 }] }],
    } satisfies TraceLeakResponse,
  },
  errors: [
    { summary: 'Empty body', error: new InvalidInput(dumpProblem('') ?? '') },
    { summary: 'Not sent as text', error: new InvalidInput('Send the body as Content-Type: text/plain; charset=utf-8; got Content-Type application/json') },
    { summary: 'Not UTF-8', error: new InvalidInput(dumpProblem('\uFFFD') ?? '') },
  ],
});
