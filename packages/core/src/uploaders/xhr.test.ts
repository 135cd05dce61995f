// @vitest-environment jsdom
/**
 * XhrUploader against a real HTTP server on loopback, through jsdom's XMLHttpRequest (which
 * speaks real HTTP): the bytes that arrive are compared by sha256 with the bytes sent.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { defaultLocale, translate } from '../locale.ts';
import type { FerryFile } from '../types.ts';
import type { BundleContext, UploadContext } from '../uploader.ts';
import { XhrUploader } from './xhr.ts';

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server;
let base = '';
let received: Received[];
/** Requests left hanging by /hang, and whether each was closed by the client. */
let hanging: { closed: boolean }[];
let failures = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', '*');
    res.setHeader('access-control-allow-methods', 'POST, PUT');
    if (req.method === 'OPTIONS') return void res.end();
    const path = new URL(req.url ?? '/', base).pathname;
    if (path === '/hang') {
      const entry = { closed: false };
      hanging.push(entry);
      req.on('close', () => {
        entry.closed = true;
      });
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks) });
      res.setHeader('content-type', 'application/json');
      if (path === '/refuse') {
        res.statusCode = 403;
        return void res.end(JSON.stringify({ message: 'not allowed here' }));
      }
      if (path === '/flaky' && failures > 0) {
        failures -= 1;
        res.statusCode = 503;
        return void res.end('busy, try later');
      }
      if (path === '/bundle')
        return void res.end(JSON.stringify({ files: [{ url: '/stored/1' }, { url: '/stored/2' }] }));
      res.end(JSON.stringify({ url: `/stored${path}`, ok: true }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));
beforeEach(() => {
  received = [];
  hanging = [];
  failures = 0;
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function pattern(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 31 + seed) & 255;
  return bytes;
}

function localFile(name: string, bytes: Uint8Array<ArrayBuffer>, meta: Record<string, string> = {}): FerryFile {
  return {
    id: name,
    name,
    type: 'application/x-test',
    data: new File([bytes], name, { type: 'application/x-test' }),
    size: bytes.length,
    meta: { name, type: 'application/x-test', ...meta },
  } as unknown as FerryFile;
}

function context(controller = new AbortController()) {
  const progress: [number, number | null][] = [];
  const ctx: UploadContext & BundleContext = {
    signal: controller.signal,
    onProgress: (sent: number, total: number | null) => progress.push([sent, total]),
    patchFile: () => undefined,
    reason: () => undefined,
    isOnline: () => true,
    i18n: (key, vars) => translate(defaultLocale, key, vars),
  };
  return { ctx, progress };
}

/** The parts of a multipart/form-data body, parsed by the platform. */
async function formOf(r: Received): Promise<FormData> {
  return new Response(new Uint8Array(r.body), {
    headers: { 'content-type': String(r.headers['content-type']) },
  }).formData();
}

test('form mode: meta as fields, the file as files[]; the answer url becomes an absolute uploadURL', async () => {
  const bytes = pattern(300_000, 1);
  const { ctx, progress } = context();
  const result = await new XhrUploader({ endpoint: `${base}/form`, headers: { 'x-album': 'a1' } }).upload(
    localFile('a.bin', bytes, { caption: 'hi' }),
    ctx,
  );
  expect(result).toEqual({ uploadURL: `${base}/stored/form`, body: { url: '/stored/form', ok: true }, status: 200 });
  expect(received).toHaveLength(1);
  const [r] = received as [Received];
  expect(r.method).toBe('POST');
  expect(r.headers['x-album']).toBe('a1');
  const form = await formOf(r);
  expect(form.get('caption')).toBe('hi');
  expect(form.get('name')).toBe('a.bin');
  const sent = form.get('files[]') as File;
  expect(sent.name).toBe('a.bin');
  expect(sha256(new Uint8Array(await sent.arrayBuffer()))).toBe(sha256(bytes));
  expect(progress.at(-1)?.[0]).toBe(r.body.length);
});

test('raw mode: the file is the body with its own type, sent with the configured method', async () => {
  const bytes = pattern(70_000, 2);
  const { ctx } = context();
  const uploader = new XhrUploader({ endpoint: (f) => `${base}/raw/${f.name}`, method: 'PUT', formData: false });
  const result = await uploader.upload(localFile('b.bin', bytes), ctx);
  expect(result.uploadURL).toBe(`${base}/stored/raw/b.bin`);
  const [r] = received as [Received];
  expect(r.method).toBe('PUT');
  expect(r.headers['content-type']).toBe('application/x-test');
  expect(sha256(r.body)).toBe(sha256(bytes));
});

test('bytes read ahead are sent instead of the file, as the form part and as the raw body', async () => {
  const bytes = pattern(10 * 1024, 5);
  // Other content of the same length shows which body went: the engine's bytes, not the File.
  const readAhead = bytes.map((b) => b ^ 0xff);
  const { ctx } = context();
  await new XhrUploader({ endpoint: `${base}/form` }).upload(localFile('e.bin', bytes), {
    ...ctx,
    bytes: () => readAhead,
  });
  const sent = (await formOf(received[0] as Received)).get('files[]') as File;
  expect(sent.name).toBe('e.bin');
  expect(sent.type).toBe('application/x-test');
  expect(sha256(new Uint8Array(await sent.arrayBuffer()))).toBe(sha256(readAhead));

  await new XhrUploader({ endpoint: `${base}/raw`, formData: false }).upload(localFile('e.bin', bytes), {
    ...ctx,
    bytes: () => readAhead,
  });
  expect(received[1]?.headers['content-type']).toBe('application/x-test');
  expect(sha256(received[1]?.body ?? Buffer.alloc(0))).toBe(sha256(readAhead));

  // Bytes of another length are not the file's: the File goes.
  await new XhrUploader({ endpoint: `${base}/raw`, formData: false }).upload(localFile('e.bin', bytes), {
    ...ctx,
    bytes: () => readAhead.subarray(1),
  });
  expect(sha256(received[2]?.body ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test("a refusal keeps the server's status and message and is not retried", async () => {
  const { ctx } = context();
  const upload = new XhrUploader({ endpoint: `${base}/refuse`, retryDelays: [0, 0] }).upload(
    localFile('c.bin', pattern(10, 3)),
    ctx,
  );
  await expect(upload).rejects.toMatchObject({ message: 'not allowed here', status: 403, retryable: false });
  expect(received).toHaveLength(1);
});

test('a 503 is retried after the configured delays; the body is read again each time', async () => {
  failures = 1;
  const bytes = pattern(5000, 4);
  const { ctx } = context();
  const result = await new XhrUploader({ endpoint: `${base}/flaky`, retryDelays: [0] }).upload(
    localFile('d.bin', bytes),
    ctx,
  );
  expect(result.status).toBe(200);
  expect(received).toHaveLength(2);
  const last = (await formOf(received[1] as Received)).get('files[]') as File;
  expect(sha256(new Uint8Array(await last.arrayBuffer()))).toBe(sha256(bytes));

  failures = 5;
  received = [];
  const failed = new XhrUploader({ endpoint: `${base}/flaky`, retryDelays: [0] }).upload(
    localFile('e.bin', bytes),
    ctx,
  );
  await expect(failed).rejects.toMatchObject({ status: 503, retryable: true, details: 'busy, try later' });
  expect(received).toHaveLength(2);
});

test('aborting the signal ends the request in flight', async () => {
  const controller = new AbortController();
  const { ctx } = context(controller);
  const upload = new XhrUploader({ endpoint: `${base}/hang`, retryDelays: [] }).upload(
    localFile('f.bin', pattern(1000, 5)),
    ctx,
  );
  await expect.poll(() => hanging.length).toBe(1);
  controller.abort();
  await expect(upload).rejects.toMatchObject({ message: 'aborted' });
  await expect.poll(() => hanging[0]?.closed).toBe(true);
});

test('bundle mode sends every file in one form and maps the answer files to uploadURLs', async () => {
  const one = pattern(4000, 6);
  const two = pattern(9000, 7);
  const { ctx } = context();
  const results = await new XhrUploader({ endpoint: `${base}/bundle`, bundle: true }).uploadBundle(
    [localFile('one.bin', one, { album: 'x' }), localFile('two.bin', two, { album: 'x' })],
    ctx,
  );
  expect(results.map((r) => r.uploadURL)).toEqual([`${base}/stored/1`, `${base}/stored/2`]);
  expect(received).toHaveLength(1);
  const form = await formOf(received[0] as Received);
  expect(form.get('album')).toBe('x');
  expect(form.get('name')).toBeNull();
  const files = form.getAll('files[]') as File[];
  expect(files.map((f) => f.name)).toEqual(['one.bin', 'two.bin']);
  expect(await Promise.all(files.map(async (f) => sha256(new Uint8Array(await f.arrayBuffer()))))).toEqual([
    sha256(one),
    sha256(two),
  ]);
});
