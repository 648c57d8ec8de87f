import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, localDynamoConfig } from '#adapters/client';
import { createStores, type Stores } from '#adapters/stores';
import { hashToken, issueToken, newApiToken } from '#domain/tokens';
import { JSON_BODY_REQUIRED, MALFORMED_JSON } from '#http/responses';
import { ROUTES, type Route } from '#http/routes';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dynamodbEndpoint, seedOwner, seedProject } from '#test-support/fixtures';
import { freePort, type RawReply, type RawRequestInput, rawRequest, reportFigure, snapshotTable } from '#test-support/hardening';

/**
 * Bad input of every kind, over real HTTP, against a local stack (the real authorizer and handlers behind the
 * API Gateway stand-in) on the run's DynamoDB Local. Every case must get a 4xx `{"error": "..."}` that says
 * what to fix, with the headers every response carries, and the whole table of cases must leave the table as
 * it was.
 */

const TABLE_NAME = `adversarial-${Date.now()}`;
const MEGABYTE = 1024 * 1024;

let stack: LocalStack;
let port: number;
let stores: Stores;
let db: DynamoDBDocumentClient;

/** What the cases point at: the demo project of the stack, plus rows of other projects they must not reach. */
interface Targets {
  projectId: string;
  /** One token per endpoint, so the 100/min limit of one token is never what answers a case. */
  tokens: Record<Route['entry'], string>;
  currentVersionId: string;
  proProjectId: string;
  foreignProjectId: string;
  foreignKeyId: string;
  foreignVersionId: string;
  foreignWatermark: string;
}
let targets: Targets;

interface Case {
  name: string;
  request: (route: Route, token: string) => RawRequestInput;
  status: number;
  /** A substring (or pattern) of `error` that tells a person what to fix. */
  message: string | RegExp;
}

const UNAUTHORIZED = 'send Authorization: Bearer <API_TOKEN>';
const NO_ROUTE = 'no such route';
const PROJECT_NOT_FOUND = 'Project not found';

/** A route that names a key names one no project has. */
const pathOf = (route: Route, projectId: string) =>
  route.path.replace('{id}', projectId).replace('{key_id}', 'key_00000000000000000000').replace('{entry_id}', 'bld_00000000000000000');
const bearer = (token: string): [string, string] => ['Authorization', `Bearer ${token}`];
const json: [string, string] = ['Content-Type', 'application/json'];
const text: [string, string] = ['Content-Type', 'text/plain; charset=utf-8'];

/** A well-formed body per endpoint, so a case that changes something else is refused for that and not for its body. */
const VALID_BODY: Partial<Record<Route['entry'], string>> = {
  'issue-keys': JSON.stringify({ count: 1 }),
  'reset-hwid': JSON.stringify({ key_id: 'key_00000000000000000000' }),
  'update-key': JSON.stringify({ note: 'renewed' }),
  'ban-key': JSON.stringify({ key_id: 'key_00000000000000000000', reason: 'Shared the key' }),
  'unban-key': JSON.stringify({ key_id: 'key_00000000000000000000' }),
  'extend-key': JSON.stringify({ key_id: 'key_00000000000000000000', duration: '7d' }),
  'revoke-key': JSON.stringify({ key_id: 'key_00000000000000000000' }),
  'revoke-bulk': JSON.stringify({ watermark: '0000000000000000' }),
  rollback: JSON.stringify({ version_id: 'ver_00000000000000000000' }),
  'trace-leak': 'print("a leaked script")',
  'add-to-blacklist': JSON.stringify({ discord_id: '00000000000000000', reason: 'Leaked' }),
};

/** A request to the route for the demo project, with a valid token and a well-formed body unless the case changes them. */
function call(route: Route, token: string, change: Partial<RawRequestInput> & { projectId?: string; query?: string } = {}): RawRequestInput {
  const { projectId = targets.projectId, query, ...rest } = change;
  const hasBody = route.method !== 'GET';
  return {
    method: route.method,
    target: `${pathOf(route, projectId)}${query ? `?${query}` : ''}`,
    headers: [bearer(token), ...(hasBody ? ['textBody' in route ? text : json] : [])],
    body: VALID_BODY[route.entry],
    ...rest,
  };
}

/** Cases every endpoint must refuse alike: authentication, the path's project id, the route itself. */
const COMMON_CASES: Case[] = [
  { name: 'no Authorization header', request: (r, t) => ({ ...call(r, t), headers: nonAuth(call(r, t)) }), status: 401, message: UNAUTHORIZED },
  { name: 'empty Authorization header', request: (r, t) => withAuth(call(r, t), ''), status: 401, message: UNAUTHORIZED },
  { name: '"Bearer" with no token', request: (r, t) => withAuth(call(r, t), 'Bearer'), status: 401, message: UNAUTHORIZED },
  {
    name: 'odd casing AUTHORIZATION: BEARER with no token',
    request: (r, t) => ({ ...call(r, t), headers: [['AUTHORIZATION', 'BEARER '], ...nonAuth(call(r, t))] }),
    status: 401,
    message: UNAUTHORIZED,
  },
  { name: 'no space between scheme and token', request: (r, t) => withAuth(call(r, t), `Bearer${t}`), status: 401, message: UNAUTHORIZED },
  { name: 'tab between scheme and token', request: (r, t) => withAuth(call(r, t), `Bearer\t${t}`), status: 401, message: UNAUTHORIZED },
  { name: 'Basic scheme', request: (r, t) => withAuth(call(r, t), `Basic ${Buffer.from('user:pass').toString('base64')}`), status: 401, message: UNAUTHORIZED },
  { name: 'token with trailing garbage after a space', request: (r, t) => withAuth(call(r, t), `Bearer ${t} extra`), status: 401, message: UNAUTHORIZED },
  { name: 'unknown well-formed token', request: (r, t) => withAuth(call(r, t), `Bearer ${newApiToken()}`), status: 401, message: UNAUTHORIZED },
  { name: 'token of 600 characters', request: (r, t) => withAuth(call(r, t), `Bearer ${'a'.repeat(600)}`), status: 401, message: UNAUTHORIZED },
  { name: 'token of 12 KB', request: (r, t) => withAuth(call(r, t), `Bearer ${'a'.repeat(12 * 1024)}`), status: 401, message: UNAUTHORIZED },
  { name: 'token with a tab inside', request: (r, t) => withAuth(call(r, t), `Bearer ${t.slice(0, 10)}\t${t.slice(10)}`), status: 401, message: UNAUTHORIZED },
  { name: 'token with a Latin-1 byte', request: (r, t) => withAuth(call(r, t), `Bearer ${t}\u00e9`), status: 401, message: UNAUTHORIZED },
  {
    name: 'a second Authorization header with a bad token',
    request: (r, t) => ({ ...call(r, t), headers: [...(call(r, t).headers ?? []), ['authorization', 'Bearer nope']] }),
    status: 401,
    message: UNAUTHORIZED,
  },
  { name: 'project id of 5000 characters', request: (r, t) => call(r, t, { projectId: 'p'.repeat(5000) }), status: 404, message: PROJECT_NOT_FOUND },
  {
    name: 'unicode project id (percent-encoded)',
    request: (r, t) => call(r, t, { projectId: encodeURIComponent('prj_é💥名') }),
    status: 404,
    message: PROJECT_NOT_FOUND,
  },
  { name: 'project id ..%2F', request: (r, t) => call(r, t, { projectId: '..%2F' }), status: 404, message: PROJECT_NOT_FOUND },
  {
    name: 'project id ..%2F..%2F walking to another project',
    request: (r, t) => call(r, t, { projectId: `..%2F..%2Fprojects%2F${targets.foreignProjectId}` }),
    status: 404,
    message: PROJECT_NOT_FOUND,
  },
  { name: 'project id %00', request: (r, t) => call(r, t, { projectId: '%00' }), status: 404, message: PROJECT_NOT_FOUND },
  { name: 'invalid percent-encoding in the project id', request: (r, t) => call(r, t, { projectId: '%E0%A4%A' }), status: 404, message: NO_ROUTE },
  { name: 'raw ../ segment in the path', request: (r, t) => call(r, t, { projectId: `x/../${targets.projectId}` }), status: 404, message: NO_ROUTE },
  { name: 'trailing slash', request: (r, t) => ({ ...call(r, t), target: `${pathOf(r, targets.projectId)}/` }), status: 404, message: NO_ROUTE },
  { name: 'wrong method', request: (r, t) => ({ ...call(r, t), method: r.method === 'GET' ? 'DELETE' : 'PUT' }), status: 404, message: NO_ROUTE },
  { name: "another owner's project", request: (r, t) => call(r, t, { projectId: targets.foreignProjectId }), status: 404, message: PROJECT_NOT_FOUND },
  {
    name: "the owner's project on the pro plan",
    request: (r, t) => call(r, t, { projectId: targets.proProjectId }),
    status: 403,
    message: 'requires a Business plan',
  },
];

function nonAuth(request: RawRequestInput): [string, string][] {
  return (request.headers ?? []).filter(([name]) => name.toLowerCase() !== 'authorization');
}
function withAuth(request: RawRequestInput, value: string): RawRequestInput {
  return { ...request, headers: [['Authorization', value], ...nonAuth(request)] };
}

const LIMIT = 'limit must be a whole number between 1 and 100';
const OFFSET = 'offset must be a whole number between 0 and 999999999999999';
const NOT_OBJECT = 'Request body must be a JSON object';
const MALFORMED = MALFORMED_JSON;
const TOO_LARGE = 'Request body too large: at most 64 KB';
const CONTENT_TYPE = JSON_BODY_REQUIRED;
const NO_QUERY = 'This endpoint takes no query parameters';

const query =
  (q: string): Case['request'] =>
  (r, t) =>
    call(r, t, { query: q });
const body =
  (text: string, headers?: [string, string][]): Case['request'] =>
  (r, t) => ({ ...call(r, t), body: text, ...(headers ? { headers: [bearer(t), ...headers] } : {}) });
const jsonBody = (value: unknown): Case['request'] => body(JSON.stringify(value));

/** Cases that belong to what each endpoint reads: its query string or its body. */
const SPECIFIC_CASES: Record<Route['entry'], Case[]> = {
  'list-keys': [
    { name: 'limit=abc', request: query('limit=abc'), status: 400, message: LIMIT },
    { name: 'limit=-1', request: query('limit=-1'), status: 400, message: LIMIT },
    { name: 'limit=0', request: query('limit=0'), status: 400, message: LIMIT },
    { name: 'limit=101', request: query('limit=101'), status: 400, message: LIMIT },
    { name: 'limit=2.5', request: query('limit=2.5'), status: 400, message: LIMIT },
    { name: 'limit=1e2', request: query('limit=1e2'), status: 400, message: LIMIT },
    { name: 'limit= (empty)', request: query('limit='), status: 400, message: LIMIT },
    { name: 'limit=1e400', request: query('limit=1e400'), status: 400, message: LIMIT },
    { name: 'limit of 20 digits', request: query('limit=99999999999999999999'), status: 400, message: LIMIT },
    { name: 'limit=%ZZ', request: query('limit=%ZZ'), status: 400, message: LIMIT },
    { name: 'limit=%EF%BC%95 (fullwidth 5)', request: query('limit=%EF%BC%95'), status: 400, message: LIMIT },
    { name: 'offset=-5', request: query('offset=-5'), status: 400, message: OFFSET },
    { name: 'offset=0.5', request: query('offset=0.5'), status: 400, message: OFFSET },
    { name: 'offset=0x10', request: query('offset=0x10'), status: 400, message: OFFSET },
    { name: 'offset of 16 digits', request: query('offset=1000000000000000'), status: 400, message: OFFSET },
    { name: 'offset of 23 digits', request: query('offset=99999999999999999999999'), status: 400, message: OFFSET },
    { name: 'limit repeated', request: query('limit=1&limit=2'), status: 400, message: 'Query parameter "limit" was given 2 times; give it once' },
    { name: 'offset repeated with the same value', request: query('offset=1&offset=1'), status: 400, message: 'Query parameter "offset" was given 2 times' },
    { name: 'unknown parameter page', request: query('page=2'), status: 400, message: 'Unknown query parameter "page"; allowed: limit, offset, watermark' },
    { name: 'LIMIT in capitals', request: query('LIMIT=5'), status: 400, message: 'Unknown query parameter "LIMIT"' },
    { name: '__proto__ parameter', request: query('__proto__=1'), status: 400, message: 'Unknown query parameter "__proto__"' },
  ],
  'revoke-key': [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'key_id is required' },
    { name: 'malformed JSON', request: body('{"key_id":'), status: 400, message: MALFORMED },
    { name: 'JSON array', request: jsonBody(['key_1']), status: 400, message: NOT_OBJECT },
    { name: 'JSON string', request: jsonBody('key_1'), status: 400, message: NOT_OBJECT },
    { name: 'JSON null', request: body('null'), status: 400, message: NOT_OBJECT },
    { name: 'JSON number', request: body('42'), status: 400, message: NOT_OBJECT },
    { name: 'empty body', request: body(''), status: 400, message: 'key_id is required' },
    { name: 'key_id a number', request: jsonBody({ key_id: 42 }), status: 400, message: 'key_id must be a string' },
    { name: 'key_id null', request: jsonBody({ key_id: null }), status: 400, message: 'key_id must be a string' },
    { name: 'key_id an object', request: jsonBody({ key_id: { $ne: '' } }), status: 400, message: 'key_id must be a string' },
    { name: 'key_id empty', request: jsonBody({ key_id: '' }), status: 400, message: 'key_id must not be empty' },
    { name: 'key_id of 129 characters', request: jsonBody({ key_id: 'k'.repeat(129) }), status: 400, message: 'key_id must be at most 128 characters' },
    { name: 'extra field', request: jsonBody({ key_id: 'key_1', force: true }), status: 400, message: 'Unknown field "force"; allowed: key_id' },
    { name: '__proto__ key', request: body('{"__proto__":{"revoked":0},"key_id":"key_1"}'), status: 400, message: 'forbidden key' },
    { name: 'JSON nested 30 000 deep', request: body(`${'['.repeat(30_000)}${']'.repeat(30_000)}`), status: 400, message: MALFORMED },
    { name: 'byte-order mark before the JSON', request: body('\ufeff{"key_id":"key_1"}'), status: 400, message: MALFORMED },
    { name: '1 MB body', request: jsonBody({ key_id: 'k'.repeat(MEGABYTE) }), status: 400, message: TOO_LARGE },
    {
      name: 'Content-Type text/plain',
      request: body('{"key_id":"key_1"}', [['Content-Type', 'text/plain']]),
      status: 400,
      message: `${CONTENT_TYPE}; got Content-Type text/plain`,
    },
    { name: 'no Content-Type, a JSON object (read as JSON)', request: body('{"key_id":"key_1"}', []), status: 404, message: 'not found in this project' },
    {
      name: "curl's default form type, a JSON object (read as JSON)",
      request: body('{"key_id":"key_1"}', [['Content-Type', 'application/x-www-form-urlencoded']]),
      status: 404,
      message: 'not found in this project',
    },
    {
      name: "curl's default form type, an empty JSON object",
      request: body('{}', [['Content-Type', 'application/x-www-form-urlencoded']]),
      status: 400,
      message: 'key_id is required',
    },
    {
      name: 'Content-Type form-urlencoded, a form body',
      request: body('key_id=key_1', [['Content-Type', 'application/x-www-form-urlencoded']]),
      status: 400,
      message: CONTENT_TYPE,
    },
    { name: 'no Content-Type, a form body', request: body('key_id=key_1', []), status: 400, message: `${CONTENT_TYPE}; got no Content-Type` },
    {
      name: 'Content-Type json then text/plain repeated',
      request: body('{"key_id":"key_1"}', [json, ['content-type', 'text/plain']]),
      status: 400,
      message: CONTENT_TYPE,
    },
    { name: 'unknown key id', request: jsonBody({ key_id: 'key_00000000000000000000' }), status: 404, message: 'not found in this project' },
    {
      name: "another project's key id",
      request: () => ({ ...call(routeOf('revoke-key'), targets.tokens['revoke-key']), body: JSON.stringify({ key_id: targets.foreignKeyId }) }),
      status: 404,
      message: 'not found in this project',
    },
    { name: 'key id with a lone surrogate', request: body('{"key_id":"\\ud800"}'), status: 404, message: 'not found in this project' },
    { name: 'query string on a POST', request: (r, t) => call(r, t, { query: 'force=1', body: '{"key_id":"key_1"}' }), status: 400, message: NO_QUERY },
  ],
  'issue-keys': [
    { name: 'count 0', request: jsonBody({ count: 0 }), status: 400, message: 'count must be at least 1' },
    { name: 'count 101', request: jsonBody({ count: 101 }), status: 400, message: 'count must be at most 100' },
    { name: 'count a string', request: jsonBody({ count: '5' }), status: 400, message: 'count must be a whole number from 1 to 100' },
    { name: 'duration 2w', request: jsonBody({ duration: '2w' }), status: 400, message: 'duration must be one of' },
    { name: 'duration 59 seconds', request: jsonBody({ duration: 59 }), status: 400, message: 'duration must be one of' },
    { name: 'max_fingerprints 11', request: jsonBody({ max_fingerprints: 11 }), status: 400, message: 'max_fingerprints must be at most 10' },
    { name: 'max_uses 0', request: jsonBody({ max_uses: 0 }), status: 400, message: 'max_uses must be at least 1' },
    { name: 'discord_id of 16 digits', request: jsonBody({ discord_id: '1234567890123456' }), status: 400, message: 'discord_id must be a Discord user id' },
    { name: 'note of 256 characters', request: jsonBody({ note: 'n'.repeat(256) }), status: 400, message: 'note must be at most 255 characters' },
    {
      name: 'order_id of 101 characters',
      request: jsonBody({ order_id: 'o'.repeat(101) }),
      status: 400,
      message: 'order_id must be 1 to 100 printable characters',
    },
    { name: 'order_id with a newline', request: jsonBody({ order_id: 'order\n1' }), status: 400, message: 'order_id must be 1 to 100 printable characters' },
    { name: 'extra field', request: jsonBody({ count: 1, tier: 'vip' }), status: 400, message: 'Unknown field "tier"' },
    { name: 'JSON array', request: jsonBody([1]), status: 400, message: NOT_OBJECT },
  ],
  'get-key': [
    { name: 'unknown key id', request: (r, t) => call(r, t), status: 404, message: 'not found in this project' },
    { name: 'query parameter', request: query('full=1'), status: 400, message: NO_QUERY },
  ],
  'reset-hwid': [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'key_id is required' },
    { name: 'key_id a number', request: jsonBody({ key_id: 42 }), status: 400, message: 'key_id must be a string' },
    { name: 'unknown key id', request: jsonBody({ key_id: 'key_00000000000000000000' }), status: 404, message: 'not found in this project' },
    { name: 'extra field', request: jsonBody({ key_id: 'key_1', all: true }), status: 400, message: 'Unknown field "all"; allowed: key_id' },
  ],
  'update-key': [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'Send at least one of note, discord_id, max_uses, max_fingerprints' },
    { name: 'unknown key id', request: jsonBody({ note: 'x' }), status: 404, message: 'not found in this project' },
    { name: 'max_fingerprints 0', request: jsonBody({ max_fingerprints: 0 }), status: 400, message: 'max_fingerprints must be at least 1, or null' },
    { name: 'discord_id not digits', request: jsonBody({ discord_id: 'user#1234' }), status: 400, message: 'discord_id must be a Discord user id' },
    { name: 'note of 256 characters', request: jsonBody({ note: 'n'.repeat(256) }), status: 400, message: 'note must be at most 255 characters' },
    { name: 'extra field', request: jsonBody({ note: 'x', revoked: 0 }), status: 400, message: 'Unknown field "revoked"' },
  ],
  'ban-key': [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'key_id is required' },
    { name: 'no reason', request: jsonBody({ key_id: 'key_1' }), status: 400, message: 'reason is required' },
    {
      name: 'reason of 201 characters',
      request: jsonBody({ key_id: 'key_1', reason: 'r'.repeat(201) }),
      status: 400,
      message: 'reason must be at most 200 characters',
    },
    { name: 'reason with a newline', request: jsonBody({ key_id: 'key_1', reason: 'a\nb' }), status: 400, message: 'reason must be one line' },
    { name: 'until in the past', request: jsonBody({ key_id: 'key_1', reason: 'r', until: 1 }), status: 400, message: 'until must be in the future' },
    { name: 'until a string', request: jsonBody({ key_id: 'key_1', reason: 'r', until: 'tomorrow' }), status: 400, message: 'until must be a whole number' },
    { name: 'unknown key id', request: jsonBody({ key_id: 'key_00000000000000000000', reason: 'r' }), status: 404, message: 'not found in this project' },
  ],
  'unban-key': [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'key_id is required' },
    { name: 'unknown key id', request: jsonBody({ key_id: 'key_00000000000000000000' }), status: 404, message: 'not found in this project' },
  ],
  'extend-key': [
    { name: 'no duration', request: jsonBody({ key_id: 'key_1' }), status: 400, message: 'duration is required' },
    { name: 'unknown duration', request: jsonBody({ key_id: 'key_1', duration: '2w' }), status: 400, message: 'duration must be one of' },
    { name: 'duration of 59 seconds', request: jsonBody({ key_id: 'key_1', duration: 59 }), status: 400, message: 'duration must be one of' },
    { name: 'unknown key id', request: jsonBody({ key_id: 'key_00000000000000000000', duration: '1d' }), status: 404, message: 'not found in this project' },
  ],
  'revoke-bulk': [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'watermark is required' },
    { name: 'WM_ prefix kept', request: jsonBody({ watermark: 'WM_0123456789abcdef' }), status: 400, message: 'drop the prefix and send "0123456789abcdef"' },
    { name: 'uppercase hex', request: jsonBody({ watermark: '0123456789ABCDEF' }), status: 400, message: 'must be lowercase hex' },
    { name: '15 characters', request: jsonBody({ watermark: '0123456789abcde' }), status: 400, message: 'got 15 characters' },
    { name: '17 characters', request: jsonBody({ watermark: '0123456789abcdef0' }), status: 400, message: 'got 17 characters' },
    { name: 'trailing newline', request: jsonBody({ watermark: '0123456789abcdef\n' }), status: 400, message: 'got 17 characters' },
    { name: '16 characters, not hex', request: jsonBody({ watermark: '0123456789abcdeg' }), status: 400, message: 'not hex' },
    { name: 'fullwidth unicode digits', request: jsonBody({ watermark: 'ａｂｃｄｅｆ0123456789' }), status: 400, message: 'not hex' },
    { name: 'watermark a number', request: jsonBody({ watermark: 1234567890123456 }), status: 400, message: 'watermark must be a string' },
    { name: 'watermark an array', request: jsonBody({ watermark: ['0123456789abcdef'] }), status: 400, message: 'watermark must be a string' },
    { name: 'extra field', request: jsonBody({ watermark: '0123456789abcdef', all: true }), status: 400, message: 'Unknown field "all"; allowed: watermark' },
    { name: 'malformed JSON', request: body("{'watermark':'0123456789abcdef'}"), status: 400, message: MALFORMED },
    { name: 'JSON array body', request: jsonBody(['0123456789abcdef']), status: 400, message: NOT_OBJECT },
    { name: 'JSON null', request: body('null'), status: 400, message: NOT_OBJECT },
    { name: '1 MB body', request: jsonBody({ watermark: 'a'.repeat(MEGABYTE) }), status: 400, message: TOO_LARGE },
    {
      name: 'Content-Type text/plain',
      request: body('{"watermark":"0123456789abcdef"}', [['Content-Type', 'text/plain']]),
      status: 400,
      message: CONTENT_TYPE,
    },
    { name: 'empty body', request: body(''), status: 400, message: 'watermark is required' },
  ],
  'list-versions': [
    { name: 'limit of 101', request: query('limit=101'), status: 400, message: 'limit must be a whole number between 1 and 100' },
    { name: 'limit of 0', request: query('limit=0'), status: 400, message: 'limit must be a whole number between 1 and 100' },
    { name: 'repeated parameter', request: query('a=1&a=2'), status: 400, message: 'Query parameter "a" was given 2 times' },
    { name: '__proto__ parameter', request: query('__proto__=x'), status: 400, message: 'Unknown query parameter' },
    { name: 'negative offset', request: query('offset=-1'), status: 400, message: 'offset must be a whole number' },
    { name: 'float limit', request: query('limit=2.5'), status: 400, message: 'limit must be a whole number' },
  ],
  rollback: [
    { name: 'empty object', request: jsonBody({}), status: 400, message: 'version_id is required' },
    { name: 'version_id a number', request: jsonBody({ version_id: 3 }), status: 400, message: 'version_id must be a string' },
    { name: 'version_id empty', request: jsonBody({ version_id: '' }), status: 400, message: 'version_id must not be empty' },
    {
      name: 'version_id of 129 characters',
      request: jsonBody({ version_id: 'v'.repeat(129) }),
      status: 400,
      message: 'version_id must be at most 128 characters',
    },
    {
      name: 'extra field version_number',
      request: jsonBody({ version_id: 'ver_1', version_number: 1 }),
      status: 400,
      message: 'Unknown field "version_number"',
    },
    { name: 'malformed JSON', request: body('{"version_id": ver_1}'), status: 400, message: MALFORMED },
    { name: 'JSON array', request: jsonBody([]), status: 400, message: NOT_OBJECT },
    { name: 'JSON string', request: jsonBody('ver_1'), status: 400, message: NOT_OBJECT },
    { name: '1 MB body', request: jsonBody({ version_id: 'v'.repeat(MEGABYTE) }), status: 400, message: TOO_LARGE },
    {
      name: 'Content-Type form-urlencoded, a form body',
      request: body('version_id=ver_1', [['Content-Type', 'application/x-www-form-urlencoded']]),
      status: 400,
      message: CONTENT_TYPE,
    },
    { name: 'empty body', request: body(''), status: 400, message: 'version_id is required' },
    {
      name: 'application/vnd.api+json without version_id',
      request: body('{}', [['Content-Type', 'application/vnd.api+json']]),
      status: 400,
      message: 'version_id is required',
    },
    {
      name: 'unknown version',
      request: jsonBody({ version_id: 'ver_00000000000000000000' }),
      status: 404,
      message: 'Version ver_00000000000000000000 not found in this project',
    },
    {
      name: "another project's version",
      request: () => ({ ...call(routeOf('rollback'), targets.tokens.rollback), body: JSON.stringify({ version_id: targets.foreignVersionId }) }),
      status: 404,
      message: 'not found in this project',
    },
    { name: 'version id with a NUL character', request: jsonBody({ version_id: 'ver_\u0000' }), status: 404, message: 'not found in this project' },
  ],
  'list-webhooks': [
    { name: 'unknown parameter', request: query('enabled=1'), status: 400, message: 'Unknown query parameter "enabled"; allowed: limit, offset' },
    { name: 'repeated parameter', request: query('x=1&x=1&x=1'), status: 400, message: 'Query parameter "x" was given 3 times' },
    { name: 'parameter with an empty name', request: query('=1'), status: 400, message: 'Unknown query parameter' },
    { name: 'limit of 101', request: query('limit=101'), status: 400, message: 'limit must be a whole number between 1 and 100' },
  ],
  'trace-leak': [
    { name: 'empty body', request: body(''), status: 400, message: 'The dump is empty' },
    { name: 'sent as JSON', request: body('{"dump":"x"}', [json]), status: 400, message: 'Send the body as Content-Type: text/plain; charset=utf-8' },
    { name: 'no Content-Type', request: body('print(1)', []), status: 400, message: 'got no Content-Type' },
    { name: 'charset latin1', request: body('print(1)', [['Content-Type', 'text/plain; charset=latin1']]), status: 400, message: 'charset=latin1' },
    { name: 'not UTF-8 (U+FFFD on the way in)', request: body('print("\uFFFD")', [text]), status: 400, message: 'not valid UTF-8' },
    { name: 'one byte past 5 MiB', request: body('a'.repeat(5 * 1024 * 1024 + 1), [text]), status: 400, message: 'at most 5242880 (5 MiB)' },
    { name: 'a query parameter', request: query('watermark=3f9a1c7e5b2d8046'), status: 400, message: NO_QUERY },
    { name: 'form-encoded', request: body('dump=x', [['Content-Type', 'application/x-www-form-urlencoded']]), status: 400, message: 'text/plain' },
    { name: 'text/html', request: body('<p>x</p>', [['Content-Type', 'text/html']]), status: 400, message: 'text/plain' },
    { name: 'project of another owner', request: (r, t) => call(r, t, { projectId: targets.foreignProjectId }), status: 404, message: PROJECT_NOT_FOUND },
  ],
  'get-stats': [
    { name: 'granularity=week', request: query('granularity=week'), status: 400, message: 'granularity must be hour or day' },
    { name: 'by=key', request: query('by=key'), status: 400, message: 'by must be result, executor or version' },
    { name: 'from=-1', request: query('from=-1'), status: 400, message: 'from must be Unix seconds' },
    { name: 'to in milliseconds', request: query('to=1700000000000'), status: 400, message: 'to must be Unix seconds' },
    { name: 'from=1e9', request: query('from=1e9'), status: 400, message: 'from must be Unix seconds' },
    { name: 'from after to', request: query('from=1700003600&to=1700000000'), status: 400, message: 'from (1700003600) must be before to (1700000000)' },
    { name: 'hourly window of 8 days', request: query('from=1699308800&to=1700000000'), status: 400, message: 'spans at most 7 days (168 buckets)' },
    { name: 'daily window of 91 days', request: query('granularity=day&from=1692137600&to=1700000000'), status: 400, message: 'spans at most 90 days' },
    { name: 'unknown parameter', request: query('window=7d'), status: 400, message: 'Unknown query parameter "window"' },
  ],
  'add-to-blacklist': [
    { name: 'no buyer', request: jsonBody({ reason: 'Leaked' }), status: 400, message: 'Send one of fingerprint, discord_id or email_sha256' },
    {
      name: 'two buyers',
      request: jsonBody({ discord_id: '00000000000000000', email_sha256: 'a'.repeat(64), reason: 'x' }),
      status: 400,
      message: 'not discord_id and email_sha256',
    },
    {
      name: 'fingerprint in capitals',
      request: jsonBody({ fingerprint: 'A'.repeat(64), reason: 'x' }),
      status: 400,
      message: 'fingerprint must be 64 lowercase hex',
    },
    { name: 'discord_id of 5 digits', request: jsonBody({ discord_id: '12345', reason: 'x' }), status: 400, message: 'discord_id must be a Discord user id' },
    { name: 'no reason', request: jsonBody({ discord_id: '00000000000000000' }), status: 400, message: 'reason is required' },
    { name: 'reason of 201 characters', request: jsonBody({ discord_id: '00000000000000000', reason: 'r'.repeat(201) }), status: 400, message: 'at most 200' },
  ],
  'list-blacklist': [
    { name: 'limit=0', request: query('limit=0'), status: 400, message: LIMIT },
    { name: 'offset=-1', request: query('offset=-1'), status: 400, message: OFFSET },
  ],
  'remove-from-blacklist': [
    { name: 'no such entry', request: (r, t) => call(r, t), status: 404, message: 'not found in this project' },
    {
      name: 'an id of no entry form',
      request: (r, t) => ({ ...call(r, t), target: pathOf(r, targets.projectId).replace(/bld_\d+$/, 'key_1') }),
      status: 404,
      message: 'not found in this project',
    },
  ],
};

function routeOf(entry: Route['entry']): Route {
  const route = ROUTES.find((candidate) => candidate.entry === entry);
  if (!route) throw new Error(`no route ${entry}`);
  return route;
}

/** The reply as the spec and the security rules want every refusal: 4xx JSON `{"error"}` and the response headers. */
function expectActionableRefusal(reply: RawReply, expected: Case, label: string) {
  expect.soft(reply.status, label).toBe(expected.status);
  expect.soft(reply.headers['content-type'], label).toBe('application/json');
  expect.soft(reply.headers['cache-control'], label).toBe('no-store');
  expect.soft(reply.headers['x-content-type-options'], label).toBe('nosniff');
  expect.soft(reply.json, label).toEqual({ error: expect.any(String) });
  const error = (reply.json as { error?: unknown } | undefined)?.error;
  if (typeof expected.message === 'string') expect.soft(error, label).toContain(expected.message);
  else expect.soft(error, label).toMatch(expected.message);
}

beforeAll(async () => {
  port = await freePort();
  stack = await startLocalStack({ port, dynamodbEndpoint: dynamodbEndpoint(), tableName: TABLE_NAME, stateFile: `/tmp/adversarial-${process.pid}.json` });
  db = createDocumentClient(localDynamoConfig(stack.dynamodbEndpoint));
  stores = createStores(db, TABLE_NAME);

  const tokens = {} as Record<Route['entry'], string>;
  for (const route of ROUTES) {
    tokens[route.entry] = newApiToken();
    await issueToken(stores.tokens, { ownerId: stack.ownerId, tokenHash: hashToken(tokens[route.entry]), now: 1_700_000_000 });
  }
  const foreignOwner = await seedOwner(stores);
  const foreignWatermark = 'feedfacefeedface';
  const foreign = await seedProject(stores, { ownerId: foreignOwner.ownerId, keys: 2, watermark: foreignWatermark, versions: ['theirs'] });
  const pro = await seedProject(stores, { ownerId: stack.ownerId, plan: 'pro', keys: 1, versions: ['pro'] });
  const project = await stores.projects.getProject(stack.projectId);
  targets = {
    projectId: stack.projectId,
    tokens,
    currentVersionId: project?.currentVersionId ?? '',
    proProjectId: pro.projectId,
    foreignProjectId: foreign.projectId,
    foreignKeyId: foreign.keys[0]?.id ?? '',
    foreignVersionId: foreign.versions[0]?.id ?? '',
    foreignWatermark,
  };
}, 120_000);

afterAll(async () => {
  db?.destroy();
  await stack?.stop();
});

describe('adversarial input over HTTP: every bad request gets an actionable 4xx JSON error and changes nothing', () => {
  it('answers each of the cases for all nine owner endpoints with the expected 4xx {"error"} and leaves the table unchanged', async () => {
    const before = await snapshotTable(db, TABLE_NAME);
    const perEndpoint: Record<string, number> = {};
    const statuses: Record<number, number> = {};
    for (const route of ROUTES) {
      const token = targets.tokens[route.entry];
      const cases = [...COMMON_CASES, ...SPECIFIC_CASES[route.entry]];
      for (const testCase of cases) {
        const reply = await rawRequest(port, testCase.request(route, token));
        statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
        expectActionableRefusal(reply, testCase, `${route.method} ${route.path}: ${testCase.name}`);
      }
      perEndpoint[`${route.method} ${route.path}`] = cases.length;
    }
    const after = await snapshotTable(db, TABLE_NAME);
    const total = Object.values(perEndpoint).reduce((sum, count) => sum + count, 0);

    expect(after).toEqual(before);
    expect(Math.min(...Object.values(perEndpoint))).toBeGreaterThanOrEqual(10);
    expect(Object.keys(statuses).every((status) => Number(status) >= 400 && Number(status) < 500)).toBe(true);
    reportFigure(
      `adversarial inputs: ${total} cases over HTTP; statuses ${JSON.stringify(statuses)}; table rows unchanged (${before.length}); per endpoint ${JSON.stringify(perEndpoint)}`,
    );
  });

  it("answers a bulk revoke with another owner's watermark 200 with revoked_count 0 and leaves their keys active", async () => {
    const route = routeOf('revoke-bulk');
    const reply = await rawRequest(port, { ...call(route, targets.tokens['revoke-bulk']), body: JSON.stringify({ watermark: targets.foreignWatermark }) });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ ok: true, revoked_count: 0, complete: true });
    const foreign = await stores.projects.listKeysAfter(targets.foreignProjectId, 0, 10);
    expect(foreign.map((key) => key.revoked)).toEqual([0, 0]);
  });

  it('accepts the tolerated spellings of a good request: lowercase header names, bearer in any case, extra spaces, Content-Type parameters', async () => {
    const keys = routeOf('list-keys');
    const token = targets.tokens['list-keys'];
    for (const headers of [[['authorization', `bearer ${token}`]], [['AUTHORIZATION', `BEARER    ${token}`]], [['Authorization', `  Bearer ${token}  `]]] as [
      string,
      string,
    ][][]) {
      const reply = await rawRequest(port, { method: 'GET', target: `${pathOf(keys, targets.projectId)}?limit=1`, headers });
      expect(reply.status).toBe(200);
    }
    // Rolling back to the current version changes nothing, so this one leaves the table as it was.
    const rollback = routeOf('rollback');
    const reply = await rawRequest(port, {
      ...call(rollback, targets.tokens.rollback),
      headers: [bearer(targets.tokens.rollback), ['CONTENT-TYPE', 'Application/JSON; charset=UTF-8']],
      body: JSON.stringify({ version_id: targets.currentVersionId }),
    });
    expect(reply).toMatchObject({ status: 200, json: { ok: true, current_version_id: targets.currentVersionId } });
  });
});

describe('bytes the HTTP parser refuses before the gateway runs', () => {
  it('answers control characters in the token, raw non-ASCII in the path and a 70 KB request line with a 4xx, then keeps serving', async () => {
    const keys = routeOf('list-keys');
    const token = targets.tokens['list-keys'];
    const before = await snapshotTable(db, TABLE_NAME);
    const refused = [
      { method: 'GET', target: pathOf(keys, targets.projectId), headers: [['Authorization', `Bearer ${token}\u0000`]] },
      { method: 'GET', target: pathOf(keys, targets.projectId), headers: [['Authorization', `Bearer ${token.slice(0, 8)}\u0001${token.slice(8)}`]] },
      { method: 'GET', target: pathOf(keys, targets.projectId), headers: [['Authorization', `Bearer ${token}\u007f`]] },
      { method: 'GET', target: pathOf(keys, 'prj_\u00e9'), headers: [bearer(token)] },
      { method: 'GET', target: pathOf(keys, 'p'.repeat(70_000)), headers: [bearer(token)] },
    ] satisfies RawRequestInput[];
    for (const request of refused) {
      const reply = await rawRequest(port, request);
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.status).toBeLessThan(500);
    }
    const after = await rawRequest(port, { method: 'GET', target: `${pathOf(keys, targets.projectId)}?limit=1`, headers: [bearer(token)] });
    expect(after.status).toBe(200);
    expect(await snapshotTable(db, TABLE_NAME)).toEqual(before);
    reportFigure(`HTTP-parser-level refusals: ${refused.length} cases, all 4xx, server kept serving`);
  });
});
