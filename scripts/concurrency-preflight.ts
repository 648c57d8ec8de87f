import { type CloudFormationClient, DescribeStacksCommand, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import {
  ACCOUNT_CONCURRENCY,
  API_GATEWAY_ACCOUNT_THROTTLE,
  type ConcurrencyGroup,
  FUNCTIONS_PER_GROUP,
  LOW_API_GATEWAY_THROTTLE,
  planReservations,
  RESERVED_CONCURRENCY,
  type ReservationPlan,
} from '#lib/capacity';

/**
 * `npm run deploy`'s first step: how much Lambda concurrency the stack may reserve in this account and Region, read
 * before anything is deployed, so that a reservation can never fail the deploy ("decreases account's
 * UnreservedConcurrentExecution below its minimum value") and roll the stack back.
 */

/** The Service Quotas code of Lambda's "Concurrent executions" quota, for the request to raise it. */
export const CONCURRENCY_QUOTA_CODE = 'L-B99A9384';

export interface ConcurrencyReading {
  /** The account's concurrency quota in the Region (GetAccountSettings' AccountLimit.ConcurrentExecutions). */
  quota: number;
  /** What no function of the account reserves now (AccountLimit.UnreservedConcurrentExecutions). */
  unreserved: number;
  /** What this stack's functions reserve now, already deployed (0 for a new stack): a redeploy may reserve it again. */
  heldByStack: number;
}

/** Stacks whose template was never applied to their functions: nothing they name is reserved. */
const NOTHING_DEPLOYED = new Set(['ROLLBACK_COMPLETE', 'ROLLBACK_FAILED', 'CREATE_FAILED', 'DELETE_COMPLETE']);

export async function readConcurrency(lambda: Pick<LambdaClient, 'send'>, cloudFormation: Pick<CloudFormationClient, 'send'>, stackName: string) {
  const { AccountLimit } = await lambda.send(new GetAccountSettingsCommand({}));
  const quota = AccountLimit?.ConcurrentExecutions;
  const unreserved = AccountLimit?.UnreservedConcurrentExecutions;
  if (quota === undefined || unreserved === undefined) throw new Error('GetAccountSettings answered without the account concurrency limits');
  return { quota, unreserved, heldByStack: await reservedByStack(cloudFormation, stackName) } satisfies ConcurrencyReading;
}

async function reservedByStack(cloudFormation: Pick<CloudFormationClient, 'send'>, stackName: string): Promise<number> {
  let status: string | undefined;
  try {
    status = (await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0]?.StackStatus;
  } catch (error) {
    // CloudFormation answers a stack it does not know with a ValidationError "Stack with id X does not exist".
    if (error instanceof Error && /does not exist/.test(error.message)) return 0;
    throw error;
  }
  if (!status || NOTHING_DEPLOYED.has(status)) return 0;
  const { TemplateBody } = await cloudFormation.send(new GetTemplateCommand({ StackName: stackName }));
  const resources =
    (JSON.parse(TemplateBody ?? '{}') as { Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }> }).Resources ?? {};
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::Function')
    .reduce((sum, resource) => sum + Number(resource.Properties?.ReservedConcurrentExecutions ?? 0), 0);
}

/** What the stack may reserve in all: the account's unreserved concurrency, plus its own, less what Lambda keeps. */
export const reservableOf = ({ unreserved, heldByStack }: ConcurrencyReading) => Math.max(0, unreserved + heldByStack - ACCOUNT_CONCURRENCY.unreservedMinimum);

/** The plan for this account, and what to tell the person deploying: what was reserved, what was not, how to get more. */
export function explainPlan(reading: ConcurrencyReading): { reservable: number; plan: ReservationPlan; lines: string[] } {
  const reservable = reservableOf(reading);
  const plan = planReservations(FUNCTIONS_PER_GROUP, reservable);
  const groups = (names: readonly ConcurrencyGroup[]) =>
    names.map((group) => `${group} ${FUNCTIONS_PER_GROUP[group] * RESERVED_CONCURRENCY[group]}`).join(', ');
  const lines = [
    `Lambda concurrency: quota ${reading.quota}, unreserved ${reading.unreserved}${reading.heldByStack ? ` (this stack holds ${reading.heldByStack})` : ''}; the stack may reserve ${reservable} and keeps ${ACCOUNT_CONCURRENCY.unreservedMinimum} unreserved, as Lambda requires.`,
    plan.reserved.length === 0 ? 'Reserving no concurrency.' : `Reserving ${plan.total}: ${groups(plan.reserved)}.`,
  ];
  if (plan.unreserved.length > 0) {
    const reservedByOthers = Math.max(0, reading.quota - reading.unreserved - reading.heldByStack);
    const quotaNeeded = reservedByOthers + ACCOUNT_CONCURRENCY.unreservedMinimum + plan.full;
    lines.push(
      `Not reserved: ${groups(plan.unreserved)}. These functions share the account's pool, so a flood on one of them can take the instances the others need.`,
      `Every reservation (${plan.full}) needs a quota of at least ${quotaNeeded}: ask for it in the Service Quotas console (AWS Lambda, "Concurrent executions") or with aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${CONCURRENCY_QUOTA_CODE} --desired-value ${Math.max(ACCOUNT_CONCURRENCY.total, quotaNeeded)}, then run npm run deploy again.`,
    );
  }
  return { reservable, plan, lines };
}

/**
 * In the 13 Regions whose API Gateway account throttle starts at 2,500 a second, what the deploy says before it
 * goes on: the stack's throttles are sized for 10,000, so there the account's throttle refuses first, for the owner
 * API and the loader routes together. Undefined elsewhere.
 */
export function throttleWarning(region: string): string | undefined {
  if (!(LOW_API_GATEWAY_THROTTLE.regions as readonly string[]).includes(region)) return undefined;
  const { rateLimit, burstLimit, quotaCode } = LOW_API_GATEWAY_THROTTLE;
  return `Note: in ${region} API Gateway throttles an account at ${rateLimit} requests a second (burst ${burstLimit}) across all its APIs, not ${API_GATEWAY_ACCOUNT_THROTTLE.rateLimit}: past that, owner API calls and loader checks are refused with 429 together, before the stack's own throttles. Unless the quota is raised already, ask for ${API_GATEWAY_ACCOUNT_THROTTLE.rateLimit} (Service Quotas, Amazon API Gateway, quota code ${quotaCode}) or deploy in another Region (docs/operations.md, "A first deploy in a new account").`;
}
