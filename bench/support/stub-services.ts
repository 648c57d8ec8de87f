import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDiscordStandIn, type DiscordStandIn } from '#local/discord-stand-in';

/** An HTTP service on 127.0.0.1 for one benchmark. */
export interface StubService {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) => () =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/**
 * Just enough of SQS (JSON protocol) for the event functions' first request: SendMessageBatch, SendMessage and
 * ChangeMessageVisibility succeed, with the MD5s the SDK checks. Nothing is kept; `sent` counts messages.
 */
export async function startStubSqs(): Promise<StubService & { queueUrl: (name: string) => string; sent: () => number }> {
  let sent = 0;
  const server = createServer((req, res) => {
    void readJson(req).then((body) => {
      const action = String(req.headers['x-amz-target'] ?? '').replace('AmazonSQS.', '');
      let answer: unknown = {};
      if (action === 'SendMessageBatch') {
        const entries = (body.Entries ?? []) as { Id: string; MessageBody: string }[];
        sent += entries.length;
        answer = { Successful: entries.map((e) => ({ Id: e.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(e.MessageBody) })), Failed: [] };
      } else if (action === 'SendMessage') {
        sent += 1;
        answer = { MessageId: randomUUID(), MD5OfMessageBody: md5(String(body.MessageBody ?? '')) };
      }
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0', 'x-amzn-RequestId': randomUUID() }).end(JSON.stringify(answer));
    });
  });
  const url = await listen(server);
  return { url, queueUrl: (name) => `${url}/000000000000/${name}`, sent: () => sent, close: close(server) };
}

/** The local stack's Discord stand-in, served alone, for the delivery function to post to. */
export async function startStubDiscord(): Promise<StubService & { apiBase: string; standIn: DiscordStandIn }> {
  const standIn = createDiscordStandIn();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    void standIn(req, res, url).then((served) => {
      if (!served) res.writeHead(404).end();
    });
  });
  const url = await listen(server);
  return { url, apiBase: `${url}/_local/discord`, standIn, close: close(server) };
}
