import type { Node } from 'constructs';

/**
 * Settings given at synth time (`npx cdk deploy -c name=value`, or cdk.json's `context`). The CLI passes every
 * `-c` value as a string and cdk.json may hold a JSON value, so both spellings are read alike; a value that is
 * neither is an error at synth, never a silent default.
 */

/** The stack's name unless STACK_NAME says another (bin/app.ts, `npm run deploy`, the dashboard). */
export const DEFAULT_STACK_NAME = 'ScriptDistributionDeveloperApi';

/** The Region CloudFront's web ACLs live in (scope CLOUDFRONT), and with them the edge firewall's stack. */
export const EDGE_FIREWALL_REGION = 'us-east-1';

export function booleanContext(node: Node, name: string, fallback: boolean): boolean {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`-c ${name}=${String(value)}: give true or false`);
}

export function integerContext(node: Node, name: string, fallback: number, range: { min: number; max: number }): number {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined) return fallback;
  const number = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < range.min || number > range.max) {
    throw new Error(`-c ${name}=${String(value)}: give a whole number from ${range.min} to ${range.max}`);
  }
  return number;
}

/** An email address to send to, or undefined when none is set. */
export function emailContext(node: Node, name: string): string | undefined {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value))
    throw new Error(`-c ${name}=${String(value)}: give an email address such as ops@example.com`);
  return value;
}

/** An IAM role or user ARN, or undefined when none is set. */
export function principalArnContext(node: Node, name: string): string | undefined {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/.test(value)) {
    throw new Error(`-c ${name}=${String(value)}: give an IAM role or user ARN such as arn:aws:iam::123456789012:role/Dashboard`);
  }
  return value;
}

/**
 * The custom domain of `-c domainName=api.example.com -c certificateArn=arn:aws:acm:...`: both or neither, since a
 * domain needs its certificate and a certificate alone names no domain.
 */
export function customDomainContext(node: Node): { domainName: string; certificateArn: string } | undefined {
  const domainName: unknown = node.tryGetContext('domainName');
  const certificateArn: unknown = node.tryGetContext('certificateArn');
  if ((domainName === undefined || domainName === '') && (certificateArn === undefined || certificateArn === '')) return undefined;
  if (typeof domainName !== 'string' || !/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(domainName)) {
    throw new Error(`-c domainName=${String(domainName)}: give a domain name such as api.example.com, with -c certificateArn`);
  }
  if (typeof certificateArn !== 'string' || !/^arn:aws[\w-]*:acm:[\w-]+:\d{12}:certificate\/[\w-]+$/.test(certificateArn)) {
    throw new Error(`-c certificateArn=${String(certificateArn)}: give the ARN of an ACM certificate of ${domainName} in the stack's Region`);
  }
  return { domainName, certificateArn };
}
