import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkDiscord } from '#domain/discord/link';
import type { DiscordKeyStore } from '#domain/ports';
import { RefusalTally, UNSIGNED_REFUSALS, UNSIGNED_REFUSALS_MESSAGE } from '#domain/unsigned-refusals';
import { createInteractionsHandler, LINK_MEMORY } from '#http/discord-interactions';
import { createStubHandler } from '#http/loader-stub';
import { STUB_ROUTE } from '#http/public-routes';
import { memoryDiscordKeyPair } from '#local/discord-key';
import { buildHttpApiEvent } from '#local/proxy-event';
import { STUB_LOADER_FILE } from '#local/server';
import { interactionEvent } from '#test-support/discord-events';
import { createTestTable, FIXED_NOW, lambdaContext, type SeededOwner, seedOwner, type TestTable } from '#test-support/fixtures';

/**
 * Public routes no one signs (DESIGN.md, "Limits that protect every tenant"), on DynamoDB Local: from one client
 * address at most 120 a minute of hosted stubs for projects that do not exist and of Discord interactions whose
 * signature fails; past that 429 {"error"} with Retry-After until the minute ends. A known project's stub and a
 * correctly signed interaction are never limited. Each handler stands for one warm container.
 */

const MINUTE = FIXED_NOW - (FIXED_NOW % 60) + 60_000;
const NOW = MINUTE + 10;
const FLOODER = '203.0.113.9';
const logger = new Logger({ serviceName: 'unsigned-refusals-test', logLevel: 'SILENT' });
const application = memoryDiscordKeyPair();
const STUB_SOURCE = readFileSync(STUB_LOADER_FILE, 'utf8');

let table: TestTable;
let owner: SeededOwner;
let projectId: string;
let clock = NOW;
let unknownIds = 0;

beforeAll(async () => {
  table = await createTestTable('unsigned');
  owner = await seedOwner(table.stores);
  projectId = await table.stores.dashboard.createProject({ ownerId: owner.ownerId, name: 'Public', plan: 'business', now: FIXED_NOW });
  await linkDiscord(table.stores.discord, projectId, { publicKey: application.publicKeyHex }, FIXED_NOW);
});

afterAll(async () => {
  await table?.drop();
});

/** One container of the loader's function, serving the stub. */
function stubContainer() {
  let reads = 0;
  const handler = createStubHandler({
    projects: {
      getProject: (id) => {
        reads += 1;
        return table.stores.projects.getProject(id);
      },
    },
    rateLimits: table.stores.rateLimits,
    refusals: new RefusalTally(),
    stubSource: STUB_SOURCE,
    loaderBaseUrl: () => 'https://loader.example.com',
    now: () => clock,
    logger,
  });
  const get = async (id: string, sourceIp = FLOODER) => {
    const event = buildHttpApiEvent({
      method: 'GET',
      routePath: STUB_ROUTE.path,
      rawPath: `/v1/loader/stub/${id}`,
      rawQueryString: '',
      headerPairs: [],
      body: null,
      isBase64Encoded: false,
      requestId: 'req-stub',
      timeEpoch: clock * 1000,
      sourceIp,
      stage: '$default',
      accountId: '123456789012',
      apiId: 'a1b2c3d4e5',
      domainName: 'loader.example.com',
      pathParameters: { project_id: id },
    });
    return handler(event, lambdaContext());
  };
  return { get, reads: () => reads };
}

/** One container of the Discord function; `linkReads` counts its reads of a project's link. */
function discordContainer() {
  let linkReads = 0;
  // The DynamoDB store itself, with its link reads counted.
  const store: DiscordKeyStore = Object.create(table.stores.discord, {
    discordLink: {
      value: (id: string) => {
        linkReads += 1;
        return table.stores.discord.discordLink(id);
      },
    },
  });
  const handler = createInteractionsHandler({
    store,
    audit: table.stores.audit,
    blacklist: table.stores.blacklist,
    rateLimits: table.stores.rateLimits,
    refusals: new RefusalTally(),
    loaderBaseUrl: () => 'https://loader.example.com',
    now: () => clock,
    logger,
  });
  const post = async (options: { signedBy?: typeof application; sourceIp?: string; project?: string; headers?: Record<string, string> } = {}) => {
    const event = interactionEvent({
      projectId: options.project ?? projectId,
      body: '{"type":1}',
      now: clock,
      application: options.signedBy ?? memoryDiscordKeyPair(),
      sourceIp: options.sourceIp ?? FLOODER,
      ...(options.headers ? { headers: options.headers } : {}),
    });
    return handler(event, lambdaContext());
  };
  return { post, linkReads: () => linkReads };
}

const unknownProject = () => `prj_${(unknownIds++).toString(16).padStart(20, '0')}`;
const fresh = (address: number) => `198.51.100.${address}`;

describe('the hosted stub of projects that do not exist', () => {
  it('answers 404 to 120 a minute from one address, then 429 {"error"} with Retry-After until the minute ends', async () => {
    clock = NOW;
    const container = stubContainer();
    const address = fresh(1);
    for (let ask = 0; ask < UNSIGNED_REFUSALS.perAddressPerMinute; ask += 1) expect((await container.get(unknownProject(), address)).statusCode).toBe(404);
    const refused = await container.get(unknownProject(), address);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers?.['Retry-After']).toBe('50');
    expect(JSON.parse(refused.body)).toEqual({ error: UNSIGNED_REFUSALS_MESSAGE });
    // A known project's stub from the same address is served; another address still gets its 404.
    expect((await container.get(projectId, address)).statusCode).toBe(200);
    expect((await container.get(unknownProject(), fresh(2))).statusCode).toBe(404);
    clock = MINUTE + 60;
    expect((await container.get(unknownProject(), address)).statusCode).toBe(404);
  });

  it('never limits a known project: 500 stubs a minute from one address are all served', async () => {
    clock = NOW;
    const container = stubContainer();
    for (let ask = 0; ask < 500; ask += 1) expect((await container.get(projectId, fresh(3))).statusCode).toBe(200);
  });

  it('counts an address across containers in its shared window: at most 120 + 20 per container before the 429', async () => {
    clock = NOW;
    const [first, second] = [stubContainer(), stubContainer()];
    const address = fresh(4);
    for (let ask = 0; ask < 100; ask += 1) expect((await first.get(unknownProject(), address)).statusCode).toBe(404);
    // The first container wrote its 80 past its first 20; the second adds 20 of its own, then 40 shared.
    const allowed = UNSIGNED_REFUSALS.perAddressPerMinute - (100 - UNSIGNED_REFUSALS.sharedAfter) + UNSIGNED_REFUSALS.sharedAfter;
    for (let ask = 0; ask < allowed; ask += 1) expect((await second.get(unknownProject(), address)).statusCode).toBe(404);
    expect((await second.get(unknownProject(), address)).statusCode).toBe(429);
  });

  it('reads an unknown id once per container, and past the limit answers a repeated one with no read', async () => {
    clock = NOW;
    const container = stubContainer();
    const id = unknownProject();
    for (let ask = 0; ask < UNSIGNED_REFUSALS.perAddressPerMinute + 30; ask += 1) await container.get(id, fresh(5));
    expect(container.reads()).toBe(1);
    expect((await container.get(id, fresh(5))).statusCode).toBe(429);
  });
});

describe('Discord interactions whose signature fails', () => {
  it('answers 401 to 120 a minute from one address, then 429 with Retry-After; a correctly signed one from it still answers', async () => {
    clock = NOW;
    const container = discordContainer();
    const address = fresh(10);
    for (let ask = 0; ask < UNSIGNED_REFUSALS.perAddressPerMinute; ask += 1) expect((await container.post({ sourceIp: address })).statusCode).toBe(401);
    const refused = await container.post({ sourceIp: address });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers?.['Retry-After']).toBe('50');
    expect(JSON.parse(refused.body)).toEqual({ error: UNSIGNED_REFUSALS_MESSAGE });
    expect(await container.post({ sourceIp: address, signedBy: application })).toMatchObject({ statusCode: 200, body: '{"type":1}' });
    expect((await container.post({ sourceIp: fresh(11) })).statusCode).toBe(401);
  });

  it('counts missing signature headers, unknown projects and ids of no project form as refusals too', async () => {
    clock = NOW;
    const container = discordContainer();
    const address = fresh(12);
    const kinds = [{ headers: {} }, { project: unknownProject() }, { project: 'no such project!' }];
    for (let ask = 0; ask < UNSIGNED_REFUSALS.perAddressPerMinute; ask += 1) {
      const response = await container.post({ sourceIp: address, ...kinds[ask % kinds.length] });
      expect(response.statusCode).toBe(401);
    }
    expect((await container.post({ sourceIp: address })).statusCode).toBe(429);
  });

  it(`past the limit, refuses a flood on one project from the link read within ${LINK_MEMORY.seconds} s: no DynamoDB read per request`, async () => {
    clock = NOW;
    const container = discordContainer();
    const address = fresh(13);
    for (let ask = 0; ask <= UNSIGNED_REFUSALS.perAddressPerMinute; ask += 1) await container.post({ sourceIp: address });
    const readsBefore = container.linkReads();
    for (let ask = 0; ask < 50; ask += 1) expect((await container.post({ sourceIp: address })).statusCode).toBe(429);
    expect(container.linkReads()).toBe(readsBefore);
    // Another address, under its limit, is answered from a fresh read of the link.
    expect((await container.post({ sourceIp: fresh(14), signedBy: application })).statusCode).toBe(200);
    expect(container.linkReads()).toBe(readsBefore + 1);
  });
});
