import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type MarkerScan, WatermarkScanner } from '#domain/watermark-scan';

export { MAX_DISTINCT_MALFORMED, MAX_REPORTED_CHARS, type MalformedMarker, type MarkerScan, markerProblem, WatermarkScanner } from '#domain/watermark-scan';

async function scanStream(chunks: AsyncIterable<Uint8Array>, onChunk?: (bytesSoFar: number) => void): Promise<MarkerScan> {
  const scanner = new WatermarkScanner();
  let bytes = 0;
  for await (const chunk of chunks) {
    scanner.push(chunk);
    bytes += chunk.length;
    onChunk?.(bytes);
  }
  return scanner.finish();
}

/** Scan a file as a stream of 1 MiB chunks; `onProgress` gets bytes read and the file's size. */
export async function scanFile(path: string, onProgress?: (bytesRead: number, totalBytes: number) => void): Promise<MarkerScan> {
  const { size } = await stat(path);
  return scanStream(createReadStream(path, { highWaterMark: 1024 * 1024 }), onProgress && ((bytes) => onProgress(bytes, size)));
}
