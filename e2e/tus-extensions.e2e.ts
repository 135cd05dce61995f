/**
 * tus-js-client (Node) against the real `ferry` binary, exercising the extensions it drives:
 * parallel uploads joined by concatenation, deferred length from a stream, the PATCH method
 * override, and checksum/expiration headers seen on the wire.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
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

function upload(input: Buffer | Readable, options: tus.UploadOptions): Promise<tus.Upload> {
  return new Promise((ok, fail) => {
    const up = new tus.Upload(input, {
      endpoint: `${ferry.url}/files/`,
      retryDelays: [],
      ...options,
      onSuccess: () => ok(up),
      onError: fail,
    });
    up.start();
  });
}

async function storedDigest(url: string): Promise<{ size: number; sha256: string } | undefined> {
  return (await storedTusUploads(ferry.dataDir)).find((s) => url.endsWith(s.id));
}

test('OPTIONS advertises every extension', async () => {
  const res = await fetch(`${ferry.url}/files/`, { method: 'OPTIONS' });
  expect(res.status).toBe(204);
  expect(res.headers.get('tus-extension')?.split(',').sort()).toEqual(
    [
      'checksum',
      'checksum-trailer',
      'concatenation',
      'concatenation-unfinished',
      'creation',
      'creation-defer-length',
      'creation-with-upload',
      'expiration',
      'termination',
    ].sort(),
  );
  expect(res.headers.get('tus-checksum-algorithm')).toBe('sha1,md5,sha256,crc32');
});

test('parallel uploads are concatenated into one byte-exact final upload', async () => {
  const bytes = randomBytes(9 * MiB + 12345);
  const done = await upload(bytes, {
    parallelUploads: 3,
    metadata: { filename: 'parallel.bin', filetype: 'application/octet-stream' },
  });
  const url = done.url ?? '';
  expect(url).toMatch(/\/files\/[0-9a-f]{32}$/);
  const head = await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
  expect(head.headers.get('upload-concat')).toMatch(/^final;\/files\/[0-9a-f]{32}( \/files\/[0-9a-f]{32}){2}$/);
  expect(head.headers.get('upload-offset')).toBe(String(bytes.length));
  expect(await storedDigest(url)).toEqual(expect.objectContaining({ size: bytes.length, sha256: sha256(bytes) }));
  const download = Buffer.from(await (await fetch(url)).arrayBuffer());
  expect(sha256(download)).toBe(sha256(bytes));
});

test('deferred length: a stream of unknown size, length sent with the last PATCH', async () => {
  const bytes = randomBytes(5 * MiB + 777);
  const seen: string[] = [];
  const done = await upload(Readable.from([bytes.subarray(0, 2 * MiB), bytes.subarray(2 * MiB)]), {
    uploadLengthDeferred: true,
    chunkSize: 2 * MiB,
    onBeforeRequest: (req) => {
      const deferred = req.getHeader('Upload-Defer-Length');
      const length = req.getHeader('Upload-Length');
      seen.push(`${req.getMethod()} defer=${deferred ?? '-'} length=${length ?? '-'}`);
    },
  });
  expect(seen[0]).toBe('POST defer=1 length=-');
  expect(seen.at(-1)).toBe(`PATCH defer=- length=${bytes.length}`);
  expect(await storedDigest(done.url ?? '')).toEqual(
    expect.objectContaining({ size: bytes.length, sha256: sha256(bytes) }),
  );
});

test('PATCH through X-HTTP-Method-Override, with Upload-Expires on the answers', async () => {
  const bytes = randomBytes(3 * MiB);
  const methods: string[] = [];
  const expires: (string | null)[] = [];
  const done = await upload(bytes, {
    chunkSize: MiB,
    overridePatchMethod: true,
    onBeforeRequest: (req) => {
      methods.push(
        `${req.getMethod()}${req.getHeader('X-HTTP-Method-Override') ? `/${req.getHeader('X-HTTP-Method-Override')}` : ''}`,
      );
    },
    onAfterResponse: (_req, res) => {
      expires.push(res.getHeader('Upload-Expires') ?? null);
    },
  });
  expect(methods).toEqual(['POST', 'POST/PATCH', 'POST/PATCH', 'POST/PATCH']);
  // Unfinished after creation and the first two chunks; finished uploads do not expire.
  expect(expires.slice(0, 3).every((e) => e !== null && Date.parse(e) > Date.now())).toBe(true);
  expect(expires[3]).toBeNull();
  expect(await storedDigest(done.url ?? '')).toEqual(
    expect.objectContaining({ size: bytes.length, sha256: sha256(bytes) }),
  );
});

test('abort then resume from the server offset, then terminate', async () => {
  const bytes = randomBytes(6 * MiB);
  const first = new tus.Upload(bytes, { endpoint: `${ferry.url}/files/`, chunkSize: 2 * MiB, retryDelays: [] });
  await new Promise<void>((ok, fail) => {
    first.options.onChunkComplete = () => {
      first.abort().then(() => ok(), fail);
    };
    first.options.onError = fail;
    first.start();
  });
  const url = first.url ?? '';
  const resumed = await upload(bytes, { uploadUrl: url, chunkSize: 2 * MiB });
  expect(resumed.url).toBe(url);
  expect(await storedDigest(url)).toEqual(expect.objectContaining({ size: bytes.length, sha256: sha256(bytes) }));
  await resumed.abort(true);
  const head = await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
  expect(head.status).toBe(404);
});
