import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { QueueTelemetrySink, TELEMETRY_NOT_QUEUED } from '#adapters/telemetry-queue';
import type { MessageSender, OutgoingMessage } from '#domain/webhooks/ports';
import type { ExecutionRecord, ValidationRecord } from '#schemas/telemetry';
import { captureLogs } from '#test-support/event-fixtures';

const records: (ValidationRecord | ExecutionRecord)[] = [
  { kind: 'validation', projectId: 'prj_a', keyId: 'key_1', result: 'ok', executor: 'Wave', fingerprint: '0'.repeat(64), at: 1_700_000_000 },
  { kind: 'execution', projectId: 'prj_a', keyId: 'key_1', executor: 'Wave', at: 1_700_000_000 },
];

describe('QueueTelemetrySink', () => {
  it("queues a check's records as one ingest batch, in the project's message group", async () => {
    const sent: OutgoingMessage[] = [];
    const queue: MessageSender = {
      sendBatch: async (messages) => {
        sent.push(...messages);
        return [];
      },
    };
    await new QueueTelemetrySink(queue, new Logger({ logLevel: 'SILENT' })).report(records);
    expect(sent).toEqual([{ id: 'check', body: JSON.stringify({ records }), groupId: 'prj_a' }]);
  });

  it('logs and counts a check whose telemetry could not be queued, without failing the check', async () => {
    const logs = captureLogs();
    try {
      const queue: MessageSender = { sendBatch: async () => ['check'] };
      await new QueueTelemetrySink(queue, new Logger({ serviceName: 'loader-check' })).report(records);
      expect(logs.entries()).toEqual([expect.objectContaining({ message: TELEMETRY_NOT_QUEUED, records: 2, error: 'refused by the queue' })]);
    } finally {
      logs.restore();
    }
  });
});
