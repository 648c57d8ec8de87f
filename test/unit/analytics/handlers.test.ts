import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import type { AnalyticsEvent } from '#domain/analytics/model';
import type { TelemetryStore } from '#domain/ports';
import { createDailyHandler } from '#functions/daily-detectors';
import { createIngestHandler } from '#functions/ingest';
import type { AnalyticsDeps } from '#runtime/analytics';

const NOW = 1_700_000_000; // 2023-11-14T22:13:20Z

/** A store with only `methods`; any other call fails the test, so it also proves what a handler does not touch. */
function storeWith(methods: Partial<TelemetryStore> = {}): TelemetryStore {
  return new Proxy(methods as TelemetryStore, {
    get: (target, name) => {
      const method = target[name as keyof TelemetryStore];
      if (method) return method;
      throw new Error(`unexpected store call: ${String(name)}`);
    },
  });
}

const deps = (store: TelemetryStore): AnalyticsDeps => ({ store, now: () => NOW, logger: new Logger({ serviceName: 'test', logLevel: 'SILENT' }) });

describe('ingest handler', () => {
  it('fails an invocation whose payload is not a batch, before touching the table', async () => {
    const handler = createIngestHandler(deps(storeWith()));
    await expect(handler({ record: [] })).rejects.toThrow('Invalid ingest request: records must be an array');
    await expect(handler(null)).rejects.toThrow('Invalid ingest request');
  });

  it('answers a batch of only bad records with their reasons and writes nothing', async () => {
    const handler = createIngestHandler(deps(storeWith()));
    const result = await handler({ records: [{ kind: 'execution', projectId: 'prj_a' }] });
    expect(result).toEqual({ accepted: 0, rejected: 1, rejections: [{ index: 0, reason: 'executor is required; at is required' }], events: [] });
  });
});

describe('daily detector handler', () => {
  it("judges the day before the schedule's own date, even when invoked later", async () => {
    const asked: string[] = [];
    const written: AnalyticsEvent[] = [];
    const store = storeWith({
      executionsOn: async (date) => {
        asked.push(date);
        return new Map(date === '2023-11-12' ? [['prj_a', 100]] : [['prj_a', 69]]);
      },
      putEvent: async (event) => {
        written.push(event);
        return true;
      },
    });
    const result = await createDailyHandler(deps(store))({ time: '2023-11-14T00:05:00Z' });
    expect(asked.sort()).toEqual(['2023-11-12', '2023-11-13']);
    expect(result).toEqual({ date: '2023-11-13', projectsJudged: 1, events: [{ name: 'execution_drop', projectId: 'prj_a', dedupKey: '2023-11-13' }] });
    expect(written.map((event) => event.data)).toEqual([{ date: '2023-11-13', executions: 69, previousExecutions: 100, dropPercent: 31 }]);
  });

  it('falls back to the current UTC day when the event carries no time', async () => {
    const asked: string[] = [];
    const store = storeWith({
      executionsOn: async (date) => {
        asked.push(date);
        return new Map();
      },
    });
    const result = await createDailyHandler(deps(store))({});
    expect(result).toEqual({ date: '2023-11-13', projectsJudged: 0, events: [] });
    expect(asked.sort()).toEqual(['2023-11-12', '2023-11-13']);
  });
});
