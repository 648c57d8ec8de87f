import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { answerInteraction, type InteractionDeps } from '#domain/discord/interactions';
import type { DiscordLink } from '#domain/discord/link';
import { isSignedBy, signatureHeadersProblem } from '#domain/discord/signature';
import { countUnsignedRefusal, pastUnsignedLimit, type UnsignedRefusalDeps } from '#domain/unsigned-refusals';
import type { OriginSecrets } from '#http/origin-verify';
import { stubUrlOf } from '#http/public-routes';
import { Interaction } from '#schemas/discord';
import { PATH_ID_PATTERN } from '#schemas/formats';
import { type HttpApiHandler, onHttpApi } from './http-api';
import type { LoaderBaseUrlOf } from './loader-stub';
import { type Internal, type JsonEvent, jsonErrors, lowercaseHeaders, MAX_BODY_BYTES, parse, requestIdsInLogs } from './middlewares';
import { jsonResponse, MALFORMED_JSON } from './responses';

export interface InteractionsHandlerDeps extends InteractionDeps, UnsignedRefusalDeps {
  loaderBaseUrl: LoaderBaseUrlOf;
  now: () => number;
  logger: Logger;
  /** The front door's secret: with it, the client's address is the viewer's CloudFront names (http-api.ts). */
  originSecrets?: OriginSecrets | undefined;
}

/**
 * How long the container trusts its last read of a project's link to refuse an address past its refusals a minute
 * with no read (and at most how many projects it keeps): a flood from one address then costs no DynamoDB request.
 * Only such an address is answered from it: a link made or changed since is read afresh for everyone else.
 */
export const LINK_MEMORY = { seconds: 60, kept: 1_000 } as const;

/**
 * One sentence for an unknown project, a project with no link and a wrong signature alike: the answer tells a
 * caller without the application's private key nothing about which projects exist or are linked.
 */
const SIGNATURE_REFUSED = 'Invalid request signature';

/** A signed interaction of an application other than the one linked (the same key in two applications). */
const OTHER_APPLICATION = "The interaction's application_id is not the application linked to this project";

/**
 * `POST /v1/discord/interactions/{project_id}`, Discord's HTTP interactions for a linked project. In this order:
 * the signature headers' form and age, the project's link (one consistent read of the project item), the Ed25519
 * signature over the timestamp and the raw body, and only then the body is parsed (400 when it is not JSON), its
 * `application_id` checked against the linked one when the link names one (401 otherwise), and answered. Every
 * refusal before the answer changes nothing; those before the signature verifies count toward the address's
 * refusals a minute, past which they are 429s (lambdas/domain/unsigned-refusals.ts).
 */
export function createInteractionsHandler(deps: InteractionsHandlerDeps): HttpApiHandler {
  const links = new Map<string, { link: DiscordLink | undefined; readAt: number }>();
  const readLink = async (projectId: string, now: number): Promise<DiscordLink | undefined> => {
    const link = await deps.store.discordLink(projectId);
    if (links.size >= LINK_MEMORY.kept) links.clear();
    links.set(projectId, { link, readAt: now });
    return link;
  };
  const handler = middy<JsonEvent, APIGatewayProxyResult, Error, Context, Internal>()
    .use(requestIdsInLogs(deps.logger))
    .use(jsonErrors(deps.logger))
    .use(lowercaseHeaders())
    .handler(async (event) => {
      const now = deps.now();
      const sourceIp = event.requestContext.identity.sourceIp;
      // Each 401 counts toward its address's refusals a minute; past them it is a 429 (unsigned-refusals.ts).
      const refuse = async (error: string) => {
        await countUnsignedRefusal(deps, sourceIp, now);
        return jsonResponse(401, { error });
      };
      const signature = event.headers['x-signature-ed25519'];
      const timestamp = event.headers['x-signature-timestamp'];
      const problem = signatureHeadersProblem({ signature, timestamp }, now);
      if (problem) return refuse(problem);
      const raw = typeof event.body === 'string' ? event.body : '';
      const body = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      if (body.length > MAX_BODY_BYTES) return refuse(SIGNATURE_REFUSED);
      const projectId = event.pathParameters?.project_id ?? '';
      if (!PATH_ID_PATTERN.test(projectId)) return refuse(SIGNATURE_REFUSED);
      const signed = { signature, timestamp, body };
      // An address past its refusals whose signature the link read lately refuses too gets its 429 with no read.
      const remembered = links.get(projectId);
      if (remembered && now - remembered.readAt < LINK_MEMORY.seconds && pastUnsignedLimit(deps, sourceIp, now)) {
        if (!remembered.link || !isSignedBy(remembered.link.publicKey, signed)) return refuse(SIGNATURE_REFUSED);
      }
      const link = await readLink(projectId, now);
      if (!link || !isSignedBy(link.publicKey, signed)) return refuse(SIGNATURE_REFUSED);

      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        return jsonResponse(400, { error: MALFORMED_JSON });
      }
      const interaction = parse(Interaction, json);
      if (link.applicationId !== null && interaction.application_id !== link.applicationId) return jsonResponse(401, { error: OTHER_APPLICATION });
      const stubUrl = stubUrlOf(deps.loaderBaseUrl(event), projectId);
      const reply = await answerInteraction(deps, { projectId, link, stubUrl, now, requestId: event.requestContext.requestId }, interaction);
      return jsonResponse(200, reply);
    });
  return onHttpApi(handler, deps.originSecrets);
}
