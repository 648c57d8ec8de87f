import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { FREE_KEY_ROUTES } from '#http/public-routes';
import { mergeGrants } from '#http/table-grants';
import { ServiceFunction } from './service-function';
import { bindTable } from './table-access';

export interface FreeKeysProps {
  table: TableV2;
  /** The stack's key secret: provider secrets are sealed under a key derived from it (lambdas/domain/free-keys/sealing.ts). */
  keySecret: ISecret;
}

/**
 * The key page of free keys behind checkpoints (docs/free-keys.md), behind the loader routes' HTTP API in a function
 * of its own: its returns wait on the providers' APIs, which must not hold the loader's instances.
 */
export class FreeKeys extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: FreeKeysProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Function', {
      entry: 'functions/free-keys.ts',
      description: `Free keys behind checkpoints ${FREE_KEY_ROUTES.map((route) => `${route.method} ${route.path}`).join(', ')} (public HTML)`,
    });
    bindTable(this.function, props.table, mergeGrants(FREE_KEY_ROUTES.flatMap((route) => route.tableAccess)));
    props.keySecret.grantRead(this.function);
    this.function.addEnvironment('KEY_SECRET_ARN', props.keySecret.secretArn);
  }
}
