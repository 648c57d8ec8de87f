import type { APIGatewayProxyResult } from 'aws-lambda';

/** On every response: errors and data alike are private to the caller and must not be sniffed as HTML. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

/** A failure on the service side: the client learns nothing but the request id to report. */
/**
 * The most a synchronous Lambda invocation may answer: 6 MB of the serialized JSON the function returns ("Invocation
 * payload (request and response)", https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). Past
 * it Lambda fails the call (`Function.ResponseSizeTooLarge`) and API Gateway answers with its integration failure.
 */
export const LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024;

export const INTERNAL_ERROR = 'Internal error';

/** What a client is told when its body cannot be read as JSON: what to send instead. */
export const JSON_BODY_REQUIRED = 'Request body must be a JSON object sent with Content-Type: application/json';

/** What a client is told when its JSON body does not parse: that it is not JSON, and what to send. */
export const MALFORMED_JSON = 'Request body is not valid JSON: send a JSON object with Content-Type: application/json';

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...SECURITY_HEADERS, ...headers }, body: JSON.stringify(body) };
}

export function errorResponse(statusCode: number, error: string, headers: Record<string, string> = {}, requestId?: string): APIGatewayProxyResult {
  return jsonResponse(statusCode, requestId ? { error, request_id: requestId } : { error }, headers);
}
