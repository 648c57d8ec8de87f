import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OWNER_DOCS } from '#http/openapi/owner-docs';
import { LOADER_FUNCTION_ROUTES, PUBLIC_ROUTES } from '#http/public-routes';
import { ROUTES } from '#http/routes';
import { mergeGrants } from '#http/table-grants';

describe('the owner routes, each defined once', () => {
  it('have unique entries and method-path pairs, every path under /v1/projects/{id}', () => {
    expect(new Set(ROUTES.map((route) => route.entry)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map((route) => `${route.method} ${route.path}`)).size).toBe(ROUTES.length);
    for (const route of ROUTES) expect(route.path, route.entry).toMatch(/^\/v1\/projects\/\{id\}\//);
  });

  it.each(ROUTES.map((route) => [route.entry, route] as const))('%s: its Lambda entry exports the handler of its definition', async (entry) => {
    const file = new URL(`../../../lambdas/functions/${entry}.ts`, import.meta.url);
    expect(existsSync(file), `lambdas/functions/${entry}.ts`).toBe(true);
    const { handler } = (await import(`#functions/${entry}`)) as { handler: unknown };
    expect(handler).toBeTypeOf('function');
  });

  it.each(ROUTES.map((route) => [route.entry, route] as const))(
    '%s: its scope is its access, named after its entry for a token limited to routes',
    (entry, route) => {
      expect(route.scope).toEqual({ scope: route.access, doing: route.doing, route: entry });
    },
  );

  it.each(ROUTES.map((route) => [route.entry, route] as const))('%s: documents its body exactly when it takes one', (_entry, route) => {
    expect(OWNER_DOCS[route.entry]().requestBody !== undefined).toBe(
      ('body' in route && route.body !== undefined) || ('textBody' in route && route.textBody !== undefined),
    );
  });
});

describe('mergeGrants', () => {
  it("makes one line of the same line, and one line of lines that differ only in their partitions, keeping the first one's place", () => {
    expect(
      mergeGrants([
        { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: ['a'] },
        { actions: ['dynamodb:GetItem'], partitions: ['key'] },
        { queryIndex: 'byWatermark' },
        { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: ['a'] },
        { actions: ['dynamodb:GetItem'], partitions: ['project'] },
        { queryIndex: 'byWatermark' },
      ]),
    ).toEqual([
      { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: ['a'] },
      { actions: ['dynamodb:GetItem'], partitions: ['key', 'project'] },
      { queryIndex: 'byWatermark' },
    ]);
  });

  it('keeps apart lines whose actions, attributes or ReturnValues differ', () => {
    const lines = [
      { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: ['a'], returnValues: ['UPDATED_NEW'] },
      { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: ['a'] },
      { actions: ['dynamodb:UpdateItem'], partitions: ['key'], attributes: ['b'] },
      { actions: ['dynamodb:PutItem'], partitions: ['key'] },
    ] as const;
    expect(mergeGrants(lines)).toEqual(lines);
  });

  it("grants the loader's function what its three routes need: the key check's writes, a binding's machine record and blacklist read, and the script fetch's and stub's reads", () => {
    expect(LOADER_FUNCTION_ROUTES).toEqual(PUBLIC_ROUTES.filter((route) => route.mappingKey === 'v1/loader'));
    const grants = mergeGrants(LOADER_FUNCTION_ROUTES.flatMap((route) => route.tableAccess));
    expect(grants.map((grant) => ('queryIndex' in grant ? grant : { actions: grant.actions, partitions: grant.partitions }))).toEqual([
      { actions: ['dynamodb:UpdateItem'], partitions: ['key'] },
      { actions: ['dynamodb:UpdateItem'], partitions: ['rateWindow'] },
      { actions: ['dynamodb:PutItem'], partitions: ['machine'] },
      { actions: ['dynamodb:GetItem'], partitions: ['blacklist'] },
      { actions: ['dynamodb:GetItem'], partitions: ['key', 'project'] },
    ]);
  });
});
