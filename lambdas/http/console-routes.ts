import type { ConsoleRoute } from './console-route';
import { listAudit } from './console-routes/audit';
import { exportCsv, revokeSelectedKeys, searchKeys } from './console-routes/keys';
import { revokeLeak } from './console-routes/leak';
import { deleteDiscordLink, getDiscordLink, listProjects, loaderLine, putDiscordLink } from './console-routes/projects';
import { endSession, listSessions } from './console-routes/sessions';
import { addShopRoute, listShops, removeShop, replayShopReceipt } from './console-routes/shops';
import { createToken, listTokens, revokeTokenRoute } from './console-routes/tokens';
import { commitUpload, startUpload } from './console-routes/versions';
import { addWebhook, deleteWebhook, editWebhook, listWebhooks, testWebhook } from './console-routes/webhooks';

/**
 * The console's own routes under `/console/api` (docs/console.md), each defined once in console-routes/ by noun
 * (defineConsoleRoute, console-route.ts). The router (console-api.ts) serves them and the mirror of the owner
 * routes (ROUTES, routes.ts) under `/console/api/v1/…`.
 */
export const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  listProjects,
  loaderLine,
  getDiscordLink,
  putDiscordLink,
  deleteDiscordLink,
  searchKeys,
  revokeSelectedKeys,
  exportCsv,
  startUpload,
  commitUpload,
  listWebhooks,
  addWebhook,
  editWebhook,
  deleteWebhook,
  testWebhook,
  revokeLeak,
  listShops,
  addShopRoute,
  removeShop,
  replayShopReceipt,
  listAudit,
  listTokens,
  createToken,
  revokeTokenRoute,
  listSessions,
  endSession,
];
