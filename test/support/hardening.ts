import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanTable } from '#test-support/fixtures';

/**
 * Helpers the hardening tests share: how many repetitions to run, a raw HTTP/1.1 client (fetch and node:http
 * both refuse some header bytes and normalise paths, which is exactly what these tests need to send), and a
 * snapshot of the rows a request could have changed.
 */

export { freePort } from '#test-support/fixtures';
export { HARDENING_RUNS, reportFigure, timeoutFor } from '#test-support/runs';

export interface RawReply {
  status: number;
  /** Header names lowercased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequestInput {
  method: string;
  /** The request target exactly as it goes on the wire: no normalisation of `..`, no encoding. */
  target: string;
  /** Name/value pairs written as given: case, spacing and repeats kept. */
  headers?: [string, string][];
  body?: string | Buffer;
  /** Leave out Content-Length (it is added from the body otherwise). */
  omitContentLength?: boolean;
  timeoutMs?: number;
}

/**
 * One request over a fresh TCP connection, written byte for byte, with `Connection: close` so the reply ends
 * with the connection. Resolves with the parsed reply; rejects when nothing complete arrives in time.
 */
export function rawRequest(port: number, input: RawRequestInput): Promise<RawReply> {
  const body = input.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(input.body) ? input.body : Buffer.from(input.body, 'utf8');
  const headers: [string, string][] = [['Host', `127.0.0.1:${port}`], ...(input.headers ?? []), ['Connection', 'close']];
  if (!input.omitContentLength && (body.length > 0 || input.method === 'POST')) headers.push(['Content-Length', String(body.length)]);
  // latin1 keeps each header byte as given, control characters included.
  const head = Buffer.from(`${input.method} ${input.target} HTTP/1.1\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`, 'latin1');

  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete reply to ${input.method} ${input.target.slice(0, 80)} within ${input.timeoutMs ?? 15_000} ms`));
    }, input.timeoutMs ?? 15_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may answer and close before it has read a large body: the write then fails, the reply stands.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseReply(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(head);
    if (body.length > 0) socket.write(body);
  });
}

function parseReply(raw: Buffer): RawReply {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`incomplete HTTP reply: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const [statusLine = '', ...headerLines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let payload = raw.subarray(split + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') payload = dechunk(payload);
  const body = payload.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status, headers, body, json };
}

function dechunk(payload: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = payload.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(payload.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) break;
    parts.push(payload.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Entities a request of the API could change; rate windows and delivery claims change by design and are left out. */
const SNAPSHOT_ENTITIES = new Set(['OWNER', 'TOKEN', 'PROJECT', 'VERSION', 'WEBHOOK', 'KEY']);

/** Every owner, token, project, version, webhook and key row of the table, sorted, as one comparable value. */
export async function snapshotTable(db: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items = (await scanTable({ db, tableName })).filter((item) => SNAPSHOT_ENTITIES.has(String(item.entity)));
  return items.sort((a, b) => `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`));
}

export interface PausableProxy {
  endpoint: string;
  /** From now on, bytes from clients are held back: every call waits as on a database that stopped answering. */
  pause(): void;
  /** Pass on what was held back and everything after it. */
  resume(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 in front of `upstreamPort` that can stop passing requests on while keeping every
 * connection open: what clients see of a database process that hangs (accepted, never answered).
 */
export async function startPausableProxy(upstreamPort: number): Promise<PausableProxy> {
  let paused = false;
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const forward = (chunk: Buffer) => {
      if (paused) held.push(() => upstream.write(chunk));
      else upstream.write(chunk);
    };
    client.on('data', forward);
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', closeBoth).on('error', closeBoth);
    upstream.on('close', closeBoth).on('error', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      for (const send of held.splice(0)) send();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
