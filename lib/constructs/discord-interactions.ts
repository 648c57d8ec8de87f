import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { DISCORD_ROUTE } from '#http/public-routes';
import { ServiceFunction } from './service-function';
import { bindTable } from './table-access';

export interface DiscordInteractionsProps {
  table: TableV2;
}

/**
 * `POST /v1/discord/interactions/{project_id}` (DESIGN.md, "Buyers help themselves in Discord"), behind the loader
 * routes' HTTP API (and the front door's `/v1/discord/*`), in a function of its own with its own reserved concurrency: Discord gives a reply 3 seconds,
 * and a flood of loader checks must not take the instances that answer it. It reads project items (the link) and
 * key items, queries the byDiscordId index, updates key items naming only the link's and the reset's attributes,
 * and puts the project's audit entries: nothing else.
 */
export class DiscordInteractions extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: DiscordInteractionsProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Function', {
      entry: 'functions/discord-interactions.ts',
      description: `Discord interactions ${DISCORD_ROUTE.method} ${DISCORD_ROUTE.path} (public, Ed25519-signed by the linked application)`,
    });
    // What its route needs of the table (DISCORD_ROUTE's `tableAccess`).
    bindTable(this.function, props.table, DISCORD_ROUTE.tableAccess);
  }
}
