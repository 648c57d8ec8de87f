import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DISCORD_ROUTE } from '#http/public-routes';
import type { DiscordKeyPair } from '#local/discord-key';
import { buildHttpApiEvent } from '#local/proxy-event';

/** The 2.0 event of an interaction Discord posts to the project's endpoint, signed by `application` (or with `headers` as given). */
export function interactionEvent(input: {
  projectId: string;
  body: string;
  now: number;
  application: DiscordKeyPair;
  headers?: Record<string, string>;
  /** The client's address; one of Discord's unless given. */
  sourceIp?: string;
}): APIGatewayProxyEventV2 {
  const timestamp = String(input.now);
  const signed = input.headers ?? { 'X-Signature-Ed25519': input.application.signRequest(timestamp, input.body), 'X-Signature-Timestamp': timestamp };
  return buildHttpApiEvent({
    method: 'POST',
    routePath: DISCORD_ROUTE.path,
    rawPath: `/v1/discord/interactions/${input.projectId}`,
    rawQueryString: '',
    headerPairs: Object.entries({ 'Content-Type': 'application/json', ...signed }),
    body: input.body,
    isBase64Encoded: false,
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    timeEpoch: input.now * 1000,
    sourceIp: input.sourceIp ?? '162.159.128.1',
    stage: '$default',
    accountId: '123456789012',
    apiId: 'a1b2c3d4e5',
    domainName: 'a1b2c3d4e5.execute-api.us-east-1.amazonaws.com',
    pathParameters: { project_id: input.projectId },
  });
}

/** A slash command's interaction body from a user in a server. */
export const slashCommand = (name: string, user: string, key?: string): string =>
  JSON.stringify({
    type: 2,
    data: { name, type: 1, ...(key === undefined ? {} : { options: [{ name: 'key', type: 3, value: key }] }) },
    member: { user: { id: user } },
  });
