import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { SHOP_ROUTE } from '#http/public-routes';
import { ServiceFunction } from './service-function';
import { bindTable } from './table-access';

export interface ShopReceiverProps {
  table: TableV2;
  /** The key secret: order keys derive from it, and shop signing secrets are sealed under a key derived from it. */
  keySecret: ISecret;
}

/**
 * `POST /v1/shops/{connection_id}` (DESIGN.md, "Shops deliver keys by themselves"), behind the public routes' HTTP
 * API (and the front door's `/v1/shops/*`), in a function of its own with its own reserved concurrency: SellAuth
 * shows the answer to its buyer and waits 10 s for it. It may do to the table what SHOP_ROUTE's `tableAccess` says.
 */
export class ShopReceiver extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: ShopReceiverProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Function', {
      entry: 'functions/shop-receiver.ts',
      description: `Shop receiver ${SHOP_ROUTE.method} ${SHOP_ROUTE.path} (public, signed by the shop under the connection's secret)`,
    });
    bindTable(this.function, props.table, SHOP_ROUTE.tableAccess);
    props.keySecret.grantRead(this.function);
    this.function.addEnvironment('KEY_SECRET_ARN', props.keySecret.secretArn);
  }
}
