import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { GATEWAY_RESPONSE_HEADERS, GATEWAY_RESPONSES, type GatewayResponseType } from '#http/gateway-responses';
import { SECURITY_HEADERS } from '#http/responses';

/** Gateway response header values are mapping expressions: a literal must be single-quoted, and cannot hold a quote. */
function literal(value: string): string {
  if (value.includes("'")) throw new Error(`Gateway response header value ${value} holds a single quote, which ends a mapping literal`);
  return `'${value}'`;
}

/** Header mappings of static values, as `responseHeaders` takes them. */
const literals = (headers: Readonly<Record<string, string>>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, literal(value)]));

/**
 * The body template of a gateway response. Templates are Velocity: `$` and `#` in a message would be read as
 * code, so messages must be plain text. Server-side failures carry the request id, as the handlers' 500s do,
 * so a report can be matched to the logs.
 */
function gatewayResponseTemplate(type: GatewayResponseType): string {
  const { status, error } = GATEWAY_RESPONSES[type];
  if (/[$#]/.test(error)) throw new Error(`Gateway response ${type}: "$" and "#" are Velocity syntax, keep them out of the message`);
  const serverSide = type === 'DEFAULT_5XX' || (status !== undefined && status >= 500);
  return JSON.stringify(serverSide ? { error, request_id: '$context.requestId' } : { error });
}

/** Every response API Gateway makes itself (auth, throttling, routing, integration failures) as the API's `{"error"}` JSON. */
export function addJsonGatewayResponses(api: RestApi): void {
  for (const type of Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]) {
    const { status } = GATEWAY_RESPONSES[type];
    api.addGatewayResponse(`GatewayResponse${type}`, {
      type: ResponseType.of(type),
      statusCode: status === undefined ? undefined : String(status),
      responseHeaders: literals({ ...SECURITY_HEADERS, ...GATEWAY_RESPONSE_HEADERS[type] }),
      templates: { 'application/json': gatewayResponseTemplate(type) },
    });
  }
}
