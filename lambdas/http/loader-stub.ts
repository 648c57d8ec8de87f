import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { PROJECT_NOT_FOUND } from '#domain/errors';
import type { ProjectStore } from '#domain/ports';
import { hostedStub } from '#domain/stub-loader';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { type HttpApiHandler, onHttpApi } from './http-api';
import { type Internal, type JsonEvent, jsonErrors, lowercaseHeaders, requestIdsInLogs } from './middlewares';
import { jsonResponse } from './responses';

/** The loader routes' base URL a request came through (its front door's own domain, or a configured one). */
export type LoaderBaseUrlOf = (event: Pick<JsonEvent, 'requestContext'>) => string;

export interface StubHandlerDeps {
  projects: Pick<ProjectStore, 'getProject'>;
  /** examples/roblox-loader.luau as published. */
  stubSource: string;
  loaderBaseUrl: LoaderBaseUrlOf;
  logger: Logger;
}

/** Projects are never deleted, so a container may remember the ids it found: a stub then costs no table read. */
const KNOWN_PROJECTS_KEPT = 10_000;

/**
 * How long a cache may keep the stub without asking again: it changes only when the service's stub does, and
 * the ETag makes the revalidation a 304.
 */
export const STUB_MAX_AGE_SECONDS = 300;

/**
 * `GET /v1/loader/stub/{project_id}`, public: the stub loader with the project's id and the loader routes' base URL
 * filled in, text with a strong ETag (`If-None-Match` equal to it: 304); an unknown project is a 404 `{"error"}`.
 */
export function createStubHandler(deps: StubHandlerDeps): HttpApiHandler {
  const known = new Set<string>();
  const exists = async (projectId: string): Promise<boolean> => {
    if (known.has(projectId)) return true;
    if (!PATH_ID_PATTERN.test(projectId) || !(await deps.projects.getProject(projectId))) return false;
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
      if (!(await exists(projectId))) return jsonResponse(404, { error: PROJECT_NOT_FOUND });
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
  return onHttpApi(handler);
}
