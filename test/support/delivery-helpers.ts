import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DeliveryPipeline, startDeliveryPipeline } from '#local/delivery-pipeline';
import { createDiscordStandIn, type DiscordStandIn } from '#local/discord-stand-in';

export interface ServedStandIn {
  standIn: DiscordStandIn;
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** The Discord stand-in alone on 127.0.0.1, as the local server would serve it; other paths get 404. */
export async function serveStandIn(): Promise<ServedStandIn> {
  const standIn = createDiscordStandIn();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    standIn(req, res, url)
      .then((handled) => {
        if (!handled) res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Not found"}');
      })
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    standIn,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface PipelineToStandIn {
  served: ServedStandIn;
  pipeline: DeliveryPipeline;
  /** Stops the pipeline, then the stand-in. */
  stop(): Promise<void>;
}

/** The local stack's delivery pipeline on a table, posting to a Discord stand-in of its own. */
export async function pipelineToStandIn(table: { endpoint: string; tableName: string }): Promise<PipelineToStandIn> {
  const served = await serveStandIn();
  const pipeline = await startDeliveryPipeline({ endpoint: table.endpoint, tableName: table.tableName, discordApiBase: `${served.url}/_local/discord` });
  return {
    served,
    pipeline,
    stop: async () => {
      await pipeline.stop();
      await served.close();
    },
  };
}
