/**
 * The AWS list prices the bench turns its measurements into dollars with: us-east-1, November 2026 (docs/cost.md
 * names the pages). One list, so a price that changes is changed once for every benchmark that uses it.
 */

/** A month as the bench bills it: 30 days. */
export const SECONDS_PER_MONTH = 30 * 24 * 3600;

/** HTTP API requests (the loader routes' front door), by monthly tier: first 300 M, the rest; one unit per 512 KB. */
const HTTP_API_TIERS = [
  { upTo: 300e6, perMillion: 1.0 },
  { upTo: Number.POSITIVE_INFINITY, perMillion: 0.9 },
] as const;

export const PRICES = {
  /** REST API, per million requests (first 333 M a month): the front door of the loader's previous path. */
  restApiPerMillion: 3.5,
  /** HTTP API: per million requests (first tier), each metered in 512 KB increments. */
  httpApiPerMillion: HTTP_API_TIERS[0].perMillion,
  httpApiMeteredBytes: 512 * 1024,
  httpApiTiers: HTTP_API_TIERS,
  lambdaPerMillionRequests: 0.2,
  /** arm64. */
  lambdaPerGbSecond: 0.0000133334,
  /** On demand. */
  dynamoPerMillionWriteUnits: 0.625,
  dynamoPerMillionReadUnits: 0.125,
  sqsPerMillionRequests: 0.4,
  s3PerMillionGets: 0.4,
  /** Data transfer out to the internet, first 10 TB a month. */
  dataTransferOutPerGb: 0.09,
  /** Data transfer out to the internet, by monthly tier (AWS's GB is 2^30 bytes): first 10 TB, next 40, next 100, the rest. */
  transferOutTiers: [
    { upToGb: 10 * 1024, perGb: 0.09 },
    { upToGb: 50 * 1024, perGb: 0.085 },
    { upToGb: 150 * 1024, perGb: 0.07 },
    { upToGb: Number.POSITIVE_INFINITY, perGb: 0.05 },
  ],
} as const;

/** The front door's prices (bench/edge.ts), November 2026 (docs/cost.md states them). */
export const EDGE_PRICES = {
  /** CloudFront HTTPS requests, per million, by where the viewer is. */
  cloudFrontPerMillion: { Europe: 1.0, 'South America': 2.2, 'Asia Pacific': 1.2, 'North America': 1.0 },
  /** CloudFront data transfer out, first 10 TB a month, per GB. */
  cloudFrontPerGb: { Europe: 0.085, 'South America': 0.11, 'Asia Pacific': 0.12, 'North America': 0.085 },
  /** The Region's own transfer out to the internet (first 10 TB), which CloudFront's replaces: AWS origins to CloudFront are free. */
  regionOutPerGb: PRICES.dataTransferOutPerGb,
  /** AWS WAF: per million requests, and per month for the web ACL and its rule. */
  wafPerMillion: 0.6,
  wafPerMonth: 6,
  /**
   * The Region's part of a check and of a 256 KiB fetch without their bytes out, per million, from the loader-cost
   * and script-fetch benchmarks (docs/cost.md): HTTP API, Lambda, DynamoDB and the stream's ingest.
   */
  checkRegionPerMillion: 2.17,
  fetchRegionPerMillion: 2.52,
} as const;
