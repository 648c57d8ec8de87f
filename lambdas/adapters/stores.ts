import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoAuditStore } from './audit-store';
import { DynamoBlacklistStore } from './blacklist-store';
import { DynamoConsoleStore } from './console-store';
import { DashboardStore } from './dashboard-store';
import { DynamoDeliveryStore } from './delivery-store';
import { DynamoDiscordStore } from './discord-store';
import { DynamoFreeKeyStore } from './free-key-store';
import { DynamoKeyCheckStore } from './key-check-store';
import { DynamoKeyStore } from './key-store';
import { DynamoProjectStore } from './project-store';
import { DynamoRateLimitStore } from './rate-limit-store';
import { DynamoScriptVersionStore } from './script-version-store';
import { DynamoShopStore } from './shop-store';
import { DynamoTelemetryStore } from './telemetry-store';
import { DynamoTokenStore } from './token-store';

/** Every store on one table, for the runtime that serves AWS, the local stack, the dashboard and the tests. */
export interface Stores {
  projects: DynamoProjectStore;
  keyChecks: DynamoKeyCheckStore;
  keys: DynamoKeyStore;
  tokens: DynamoTokenStore;
  rateLimits: DynamoRateLimitStore;
  scriptVersions: DynamoScriptVersionStore;
  dashboard: DashboardStore;
  delivery: DynamoDeliveryStore;
  telemetry: DynamoTelemetryStore;
  audit: DynamoAuditStore;
  console: DynamoConsoleStore;
  discord: DynamoDiscordStore;
  blacklist: DynamoBlacklistStore;
  shops: DynamoShopStore;
  freeKeys: DynamoFreeKeyStore;
}

export function createStores(db: DynamoDBDocumentClient, tableName: string): Stores {
  const keys = new DynamoKeyStore(db, tableName);
  return {
    projects: new DynamoProjectStore(db, tableName),
    keyChecks: new DynamoKeyCheckStore(db, tableName),
    keys,
    tokens: new DynamoTokenStore(db, tableName),
    rateLimits: new DynamoRateLimitStore(db, tableName),
    scriptVersions: new DynamoScriptVersionStore(db, tableName),
    dashboard: new DashboardStore(db, tableName),
    delivery: new DynamoDeliveryStore(db, tableName),
    telemetry: new DynamoTelemetryStore(db, tableName),
    audit: new DynamoAuditStore(db, tableName),
    console: new DynamoConsoleStore(db, tableName),
    discord: new DynamoDiscordStore(db, tableName, (projectId, discordId) => keys.keyIdsByDiscordId(projectId, discordId)),
    blacklist: new DynamoBlacklistStore(db, tableName),
    shops: new DynamoShopStore(db, tableName),
    freeKeys: new DynamoFreeKeyStore(db, tableName),
  };
}
