import { Logger } from '@aws-lambda-powertools/logger';
import { unixSeconds } from '#domain/model';
import { createDocumentClient, tableNameFromEnv } from '#store/client';
import { DynamoTelemetryStore } from '#store/telemetry-store';
import type { TelemetryStore } from './ports';

export interface AnalyticsDeps {
  store: TelemetryStore;
  now: () => number;
  logger: Logger;
}

let defaultDeps: AnalyticsDeps | undefined;
/** Built on first use, once per container, so importing a handler (in tests, locally) needs no environment. */
export function analyticsDepsFromEnv(): AnalyticsDeps {
  defaultDeps ??= {
    store: new DynamoTelemetryStore(createDocumentClient(), tableNameFromEnv()),
    now: () => unixSeconds(),
    logger: new Logger({ serviceName: 'analytics' }),
  };
  return defaultDeps;
}
