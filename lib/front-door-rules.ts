/**
 * What the front door does to a request, as plain data and code: the CloudFront distribution
 * (lib/constructs/front-door.ts) is built from it, and the local stack's front door (local/front-door.ts) applies the
 * same path patterns, CloudFront functions and response headers to its own requests (docs/local-stack.md).
 */

/**
 * The path patterns of the distribution, most specific first (CloudFront takes the first that matches). Everything
 * else (the default behaviour) goes to the owner API, whose gateway responses answer an unknown path in JSON.
 */
export const BEHAVIOURS = {
  consoleApi: '/console/api/*',
  console: '/console*',
  ownerApi: '/v1/projects/*',
  stub: '/v1/loader/stub/*',
  loader: '/v1/loader/*',
  discord: '/v1/discord/*',
  shops: '/v1/shops/*',
  free: '/v1/free/*',
} as const;

export type BehaviourName = keyof typeof BEHAVIOURS | 'default';

/** Which origin serves each behaviour: the console's function, its files' bucket, the owner REST API, the loader HTTP API. */
export const ORIGIN_OF: Readonly<Record<BehaviourName, 'consoleApi' | 'consoleFiles' | 'ownerApi' | 'loaderApi'>> = {
  consoleApi: 'consoleApi',
  console: 'consoleFiles',
  ownerApi: 'ownerApi',
  stub: 'loaderApi',
  loader: 'loaderApi',
  discord: 'loaderApi',
  shops: 'loaderApi',
  free: 'loaderApi',
  default: 'ownerApi',
};

/** The behaviour CloudFront picks for a path: the first pattern that matches (`*` any characters, `/` included), else the default. */
export function behaviourOf(path: string): BehaviourName {
  for (const [name, pattern] of Object.entries(BEHAVIOURS)) if (pathMatches(pattern, path)) return name as keyof typeof BEHAVIOURS;
  return 'default';
}

function pathMatches(pattern: string, path: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(path);
}

/** A CloudFront function (JavaScript runtime 2.0) run on the viewer request: the whole source CloudFront is given. */
export interface ViewerRequestFunction {
  comment: string;
  code: string;
}

const viewerRequestFunction = (comment: string, body: readonly string[]): ViewerRequestFunction => ({
  comment,
  code: ['function handler(event) {', ...body.map((line) => `  ${line}`), '}'].join('\n'),
});

/** The front door's CloudFront functions, one per behaviour that has one (FUNCTION_OF). */
export const VIEWER_REQUEST_FUNCTIONS = {
  /** `/console` to `/console/`, and a path without a file name to the page: one page serves every console route. */
  consolePaths: viewerRequestFunction('The console page for /console/ and its routes', [
    'var request = event.request;',
    "if (request.uri === '/console') return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/console/' } } };",
    "var name = request.uri.slice(request.uri.lastIndexOf('/') + 1);",
    "if (name.indexOf('.') === -1) request.uri = '/console/index.html';",
    'return request;',
  ]),
  /** The viewer's Host as `x-forwarded-host`, set here so no client's header of that name reaches the console API. */
  forwardedHost: viewerRequestFunction("The console's host for the console API's Origin check", [
    'var request = event.request;',
    "request.headers['x-forwarded-host'] = { value: request.headers.host.value };",
    'return request;',
  ]),
  rootToConsole: viewerRequestFunction('GET / to the console', [
    "if (event.request.uri === '/') return { statusCode: 302, statusDescription: 'Found', headers: { location: { value: '/console/' } } };",
    'return event.request;',
  ]),
} as const satisfies Record<string, ViewerRequestFunction>;

/** The function each behaviour runs on the viewer request, when the distribution serves the console. */
export const FUNCTION_OF: Readonly<Partial<Record<BehaviourName, keyof typeof VIEWER_REQUEST_FUNCTIONS>>> = {
  consoleApi: 'forwardedHost',
  console: 'consolePaths',
  default: 'rootToConsole',
};

/** Two years, the HSTS preload list's floor. */
export const HSTS_SECONDS = 63_072_000;

/**
 * What a browser may load on the console: its own files and its own API, nothing inline (the build writes no inline
 * script or style), nothing framing it; and, as the only other origin, the scripts bucket's regional endpoint, where
 * an upload's presigned PUT goes (`https://<bucket>.s3.<region>.amazonaws.com`, the host the SDK signs; a browser
 * refuses a fetch to an origin `connect-src` does not list,
 * https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Content-Security-Policy/connect-src). The API answers
 * carry it too, where it forbids everything they never use.
 */
export function contentSecurityPolicy(uploadOrigin: string | undefined): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    uploadOrigin ? `connect-src 'self' ${uploadOrigin}` : "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The regional endpoint origin of a bucket, as the SDK's presigned URLs name it (virtual-hosted style). */
export const regionalBucketOrigin = (bucketName: string, region: string, urlSuffix: string) => `https://${bucketName}.s3.${region}.${urlSuffix}`;

/**
 * The response headers policy's headers as CloudFront writes them on every answer (override: the origin's own
 * values are replaced).
 */
export function securityHeaders(uploadOrigin: string | undefined): Readonly<Record<string, string>> {
  return {
    'content-security-policy': contentSecurityPolicy(uploadOrigin),
    'strict-transport-security': `max-age=${HSTS_SECONDS}; includeSubDomains`,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}

/**
 * The scripts bucket's CORS rule for the console's upload: a browser PUT of the file (Content-Type, the one header
 * the presigned request carries besides the signed query) from the console's origin. S3 answers the preflight only
 * when a rule matches the Origin, the method and every requested header
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/cors.html,
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/ManageCorsUsing.html).
 */
export const UPLOAD_CORS = { allowedMethods: ['PUT'], allowedHeaders: ['content-type'], maxAgeSeconds: 3600 } as const;

/**
 * The console's origin in AWS as the bucket's CORS rule names it: the distribution's own `*.cloudfront.net` name.
 * The bucket cannot name the distribution itself (the distribution reaches the console function, whose settings
 * name the bucket: a dependency cycle), so the rule allows that one wildcard, which S3 allows in an origin
 * (ManageCorsUsing.html, "AllowedOrigins element"). The presigned URL's signature stays the credential.
 */
export const CLOUDFRONT_CONSOLE_ORIGIN = 'https://*.cloudfront.net';
