import type { TelemetryStore } from '#domain/ports';
import { startCheckStreamIngest } from '#local/telemetry-pipeline';
import type { BenchTable } from './dynamodb';

/**
 * The counted checks' telemetry as AWS ingests it, off the table's stream, drained by the bench when it chooses
 * (`drain`), with what it ingested so far: checks and the batches they came in.
 */
export async function countingStreamIngest(table: Pick<BenchTable, 'endpoint' | 'tableName'>, store: TelemetryStore) {
  const counted = { checks: 0, batches: 0 };
  const ingest = await startCheckStreamIngest({
    endpoint: table.endpoint,
    tableName: table.tableName,
    store,
    autoPoll: false,
    logLevel: 'SILENT',
    onIngested: (_result, checks) => {
      counted.checks += checks;
      counted.batches++;
    },
  });
  return { ingest, counted };
}
