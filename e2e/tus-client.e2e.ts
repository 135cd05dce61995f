/** tus-js-client from Node against `/files/`: chunked upload, then resume after an aborted PATCH. */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type RunningFerry, sha256, startFerry, storedTusUploads } from './support/ferry.ts';

const MiB = 1024 * 1024;
let ferry: RunningFerry;

beforeAll(async () => {
  ferry = await startFerry();
});

afterAll(async () => {
  await ferry?.stop();
});

async function offsetOf(url: string): Promise<number> {
  const res = await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
  expect(res.status).toBe(200);
  return Number(res.headers.get('upload-offset'));
}

/** Sends a PATCH that declares `declared` bytes, writes only `sent` of them, then drops the connection. */
function abortedPatch(url: string, offset: number, body: Buffer, declared: number): Promise<void> {
  return new Promise((ok) => {
    const req = request(url, {
      method: 'PATCH',
      headers: {
        'Tus-Resumable': '1.0.0',
        'Upload-Offset': String(offset),
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(declared),
      },
    });
    req.on('error', () => ok());
    req.on('close', () => ok());
    req.write(body, () => setTimeout(() => req.destroy(), 100));
  });
}

test('32 MiB in four 8 MiB chunks resumes after an aborted PATCH', async () => {
  const bytes = randomBytes(32 * MiB);
  let patches = 0;

  // First attempt: tus-js-client sends two 8 MiB chunks, then stops.
  const first = new tus.Upload(bytes, {
    endpoint: `${ferry.url}/files/`,
    chunkSize: 8 * MiB,
    metadata: { filename: 'resume.bin' },
    retryDelays: [],
  });
  await new Promise<void>((ok, fail) => {
    first.options.onChunkComplete = () => {
      patches += 1;
      if (patches === 2) first.abort().then(() => ok(), fail);
    };
    first.options.onError = fail;
    first.options.onSuccess = () => fail(new Error('the first attempt should have stopped'));
    first.start();
  });
  const uploadUrl = first.url ?? '';
  expect(uploadUrl).toMatch(/\/files\/[0-9a-f]{32}$/);
  expect(await offsetOf(uploadUrl)).toBe(16 * MiB);

  // The third chunk's PATCH dies after 3 MiB of its 8: the server keeps those 3 MiB.
  await abortedPatch(uploadUrl, 16 * MiB, bytes.subarray(16 * MiB, 19 * MiB), 8 * MiB);
  await expect.poll(() => offsetOf(uploadUrl)).toBe(19 * MiB);

  // tus-js-client resumes from the server's offset and finishes.
  let resumedFrom = -1;
  const second = new tus.Upload(bytes, {
    endpoint: `${ferry.url}/files/`,
    uploadUrl,
    chunkSize: 8 * MiB,
    retryDelays: [],
    onProgress: (sent) => {
      if (resumedFrom < 0) resumedFrom = sent;
    },
  });
  await new Promise<void>((ok, fail) => {
    second.options.onSuccess = () => ok();
    second.options.onError = fail;
    second.start();
  });
  expect(second.url).toBe(uploadUrl);
  expect(resumedFrom).toBeGreaterThanOrEqual(19 * MiB);
  expect(await offsetOf(uploadUrl)).toBe(32 * MiB);

  const stored = (await storedTusUploads(ferry.dataDir)).find((s) => uploadUrl.endsWith(s.id));
  expect(stored?.size).toBe(bytes.length);
  expect(stored?.sha256).toBe(sha256(bytes));
});
