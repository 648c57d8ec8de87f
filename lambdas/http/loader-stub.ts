import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { PROJECT_NOT_FOUND } from '#domain/errors';
import type { ProjectStore } from '#domain/ports';
import { hostedStub } from '#domain/stub-loader';
import { countUnsignedRefusal, type UnsignedRefusalDeps } from '#domain/unsigned-refusals';
import type { OriginSecrets } from '#http/origin-verify';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { type HttpApiHandler, onHttpApi } from './http-api';
import { type Internal, type JsonEvent, jsonErrors, lowercaseHeaders, requestIdsInLogs } from './middlewares';
import { jsonResponse } from './responses';

/** The loader routes' base URL a request came through (its front door's own domain, or a configured one). */
export type LoaderBaseUrlOf = (event: Pick<JsonEvent, 'requestContext'>) => string;

export interface StubHandlerDeps extends UnsignedRefusalDeps {
  projects: Pick<ProjectStore, 'getProject'>;
  /** examples/roblox-loader.luau as published. */
  stubSource: string;
  loaderBaseUrl: LoaderBaseUrlOf;
  now: () => number;
  logger: Logger;
  /** The front door's secret: with it, the client's address is the viewer's CloudFront names (http-api.ts). */
  originSecrets?: OriginSecrets | undefined;
}

/** Projects are never deleted, so a container may remember the ids it found: a stub then costs no table read. */
const KNOWN_PROJECTS_KEPT = 10_000;

/**
 * A well-formed id found to be no project is remembered by the container this long (and at most this many ids), so
 * asking for it again costs no table read. Ids are random, so no project is made under an id asked for before it
 * existed; the bound only keeps memory small.
 */
export const UNKNOWN_PROJECTS = { seconds: 300, kept: 10_000 } as const;

/**
 * How long a cache may keep the stub without asking again: it changes only when the service's stub does, and
 * the ETag makes the revalidation a 304.
 */
export const STUB_MAX_AGE_SECONDS = 300;

/**
 * `GET /v1/loader/stub/{project_id}`, public: the stub loader with the project's id and the loader routes' base URL
 * filled in, text with a strong ETag (`If-None-Match` equal to it: 304); an unknown project is a 404 `{"error"}`,
 * and past its address's refusals a minute a 429 (lambdas/domain/unsigned-refusals.ts). An id of no project's form
 * or one found unknown lately is answered with no table read.
 */
export function createStubHandler(deps: StubHandlerDeps): HttpApiHandler {
  const known = new Set<string>();
  const unknown = new Map<string, number>();
  const exists = async (projectId: string, now: number): Promise<boolean> => {
    if (known.has(projectId)) return true;
    if (!PATH_ID_PATTERN.test(projectId) || (unknown.get(projectId) ?? 0) > now) return false;
    if (!(await deps.projects.getProject(projectId))) {
      if (unknown.size >= UNKNOWN_PROJECTS.kept) unknown.clear();
      unknown.set(projectId, now + UNKNOWN_PROJECTS.seconds);
      return false;
    }
    if (known.size >= KNOWN_PROJECTS_KEPT) known.clear();
    known.add(projectId);
    return true;
  };
  const handler = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(deps.logger))
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders())
    .handler(async (event) => {
      const projectId = event.pathParameters?.project_id ?? '';
      const now = deps.now();
      if (!(await exists(projectId, now))) {
        await countUnsignedRefusal(deps, event.requestContext.identity.sourceIp, now);
        return jsonResponse(404, { error: PROJECT_NOT_FOUND });
      }
      const stub = hostedStub(deps.stubSource, projectId, deps.loaderBaseUrl(event));
      const headers = {
        'Content-Type': 'text/plain; charset=utf-8',
        'Cache-Control': `public, max-age=${STUB_MAX_AGE_SECONDS}`,
        'X-Content-Type-Options': 'nosniff',
        ETag: stub.etag,
      };
      if (event.headers['if-none-match'] === stub.etag) return { statusCode: 304, headers, body: '' };
      return { statusCode: 200, headers, body: stub.body };
    });
  return onHttpApi(handler, deps.originSecrets);
}
