import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { defaultLocale, translate } from '../locale.ts';
import type { FerryFile } from '../types.ts';
import type { UploadContext } from '../uploader.ts';
import { S3Uploader } from './s3.ts';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

let sent: Sent[];
let answer: { status: number; body: string; location?: string };
let params: unknown;

beforeEach(() => {
  sent = [];
  answer = { status: 204, body: '' };
  params = {};
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      sent.push({ method: 'GET', url, headers: {}, body: null });
      return new Response(JSON.stringify(params), { status: 200 });
    }),
  );
  vi.stubGlobal(
    'XMLHttpRequest',
    class {
      upload = {};
      onload?: () => void;
      status = 0;
      responseText = '';
      #req: Sent = { method: '', url: '', headers: {}, body: null };
      open(method: string, url: string) {
        this.#req = { method, url, headers: {}, body: null };
      }
      setRequestHeader(k: string, v: string) {
        this.#req.headers[k] = v;
      }
      getResponseHeader(name: string) {
        return name === 'Location' ? (answer.location ?? null) : null;
      }
      abort() {}
      send(body: unknown) {
        this.#req.body = body;
        sent.push(this.#req);
        this.status = answer.status;
        this.responseText = answer.body;
        queueMicrotask(() => this.onload?.());
      }
    },
  );
});
afterEach(() => vi.unstubAllGlobals());

const file = {
  id: 'f',
  name: 'a b.txt',
  type: 'text/plain',
  data: new Blob(['hello']),
  size: 5,
  meta: { note: 'n' },
} as unknown as FerryFile;

function context(): UploadContext {
  return {
    signal: new AbortController().signal,
    onProgress: () => undefined,
    patchFile: () => undefined,
    reason: () => undefined,
    isOnline: () => true,
    i18n: (key, vars) => translate(defaultLocale, key as keyof typeof defaultLocale, vars),
  };
}

test('POST sends the signed fields first and the file last, and reads the XML answer', async () => {
  params = {
    method: 'POST',
    url: 'http://bucket/b/',
    fields: { key: 'k/1-a_b.txt', Policy: 'p', 'X-Amz-Signature': 's' },
  };
  answer = {
    status: 201,
    body: '<PostResponse><Location>http://bucket/b/k/1-a_b.txt</Location><Bucket>b</Bucket><Key>k/1-a_b.txt</Key><ETag>"e"</ETag></PostResponse>',
  };
  const result = await new S3Uploader({ companionUrl: 'http://c', retryDelays: [] }).upload(file, context());
  expect(sent[0]?.url).toBe('http://c/s3/params?filename=a+b.txt&type=text%2Fplain&metadata%5Bnote%5D=n');
  const form = sent[1]?.body as FormData;
  expect([...form.keys()]).toEqual(['key', 'Policy', 'X-Amz-Signature', 'file']);
  expect(result).toMatchObject({
    uploadURL: 'http://bucket/b/k/1-a_b.txt',
    body: { bucket: 'b', key: 'k/1-a_b.txt', etag: '"e"' },
  });
});

test('PUT sends the raw file with the signed headers', async () => {
  params = { method: 'PUT', url: 'http://bucket/b/k?X-Amz-Signature=s', headers: { 'content-type': 'text/plain' } };
  answer = { status: 200, body: '' };
  const result = await new S3Uploader({ companionUrl: 'http://c', method: 'put', retryDelays: [] }).upload(
    file,
    context(),
  );
  expect(sent[0]?.url).toContain('&method=put');
  expect(sent[1]).toMatchObject({ method: 'PUT', headers: { 'content-type': 'text/plain' } });
  expect(sent[1]?.body).toBe(file.data);
  expect(result.uploadURL).toBe('http://bucket/b/k');
});

test('bytes read ahead go instead of the Blob: as the PUT body, and as the form part named like the file', async () => {
  const bytes = new TextEncoder().encode('HELLO');
  params = { method: 'PUT', url: 'http://bucket/b/k?X-Amz-Signature=s', headers: { 'content-type': 'text/plain' } };
  answer = { status: 200, body: '' };
  const s3 = new S3Uploader({ companionUrl: 'http://c', method: 'put', retryDelays: [] });
  await s3.upload(file, { ...context(), bytes: () => bytes });
  expect(sent[1]?.body).toBe(bytes);

  params = { method: 'POST', url: 'http://bucket/b/', fields: { key: 'k' } };
  answer = { status: 204, body: '' };
  await new S3Uploader({ companionUrl: 'http://c', retryDelays: [] }).upload(file, {
    ...context(),
    bytes: () => bytes,
  });
  const part = (sent[3]?.body as FormData | undefined)?.get('file') as File;
  expect(part.name).toBe('a b.txt');
  expect(await part.text()).toBe('HELLO');
});

test("a refusal shows the bucket's Message; bad params are a clear error", async () => {
  params = { method: 'POST', url: 'http://bucket/b/', fields: {} };
  answer = { status: 403, body: '<Error><Code>AccessDenied</Code><Message>Policy expired</Message></Error>' };
  await expect(
    new S3Uploader({ companionUrl: 'http://c', retryDelays: [0] }).upload(file, context()),
  ).rejects.toMatchObject({
    message: 'Policy expired',
    status: 403,
    details: 'AccessDenied',
  });
  expect(sent.filter((s) => s.method === 'POST')).toHaveLength(1); // a 4xx is not retried
  params = { method: 'PATCH', url: 'http://bucket/b/' };
  await expect(new S3Uploader({ companionUrl: 'http://c', retryDelays: [] }).upload(file, context())).rejects.toThrow(
    /S3 upload parameters must be an object with a string `url`, optional `fields` and `method` put or post/,
  );
});
