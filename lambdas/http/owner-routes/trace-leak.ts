import { InvalidInput } from '#domain/errors';
import { dumpProblem, traceLeak } from '#domain/leak-trace';
import { defineOwnerRoute } from '#http/owner-route';
import { LeakDump, NoQuery } from '#schemas/requests';

export const traceLeakRoute = defineOwnerRoute({
  method: 'POST',
  path: '/v1/projects/{id}/leak/trace',
  entry: 'trace-leak',
  access: 'read',
  doing: 'tracing a leak',
  // A person pasting a dump, never a fleet.
  capacity: 'quiet',
  // Reading the hidden mark of a 5 MiB dump takes seconds (docs/performance.md); API Gateway gives up at 29 s.
  timeoutSeconds: 28,
  // The versions (the hidden mark's check is keyed by each), then each named watermark's keys from its index.
  tableAccess: [
    { actions: ['dynamodb:Query'], partitions: ['project'] },
    { queryIndex: 'byWatermark' },
    { actions: ['dynamodb:BatchGetItem'], partitions: ['key'] },
  ],
  query: NoQuery,
  textBody: LeakDump,
  run: ({ project, body, stores }) => {
    const problem = dumpProblem(body);
    if (problem) throw new InvalidInput(problem);
    return traceLeak(stores.projects, project, body);
  },
});
