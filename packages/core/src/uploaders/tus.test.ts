// @vitest-environment jsdom
/**
 * TusUploader against a small tus 1.0 server on loopback (`test/loopback-tus.ts`), through
 * tus-js-client's browser build on jsdom's XMLHttpRequest: stored bytes are compared by sha256
 * with the bytes sent. Small files sent whole: `tus-small.test.ts`; through a Worker:
 * `tus-upload-worker.test.ts`.
 */
import { expect, test, vi } from 'vitest';
import { defaultLocale, translate } from '../locale.ts';
import {
  context,
  localFile,
  loopbackTusServer,
  pattern,
  sha256,
  uploader as uploaderAt,
} from '../test/loopback-tus.ts';
import { serverMessage } from './tus.ts';

// The package's Node build reads Buffers and streams, not Blobs: the browser build is the one pages run.
vi.mock('tus-js-client', () => import('tus-js-client/lib.esm/browser/index.js' as string));

const server = loopbackTusServer();
/** An uploader on the create-then-PATCH path whatever the size (small files have their own tests). */
const uploader = (chunkSize?: number) => uploaderAt(server.base, chunkSize);

test('an upload stores the exact bytes with the metadata, and keeps the upload URL on the record', async () => {
  const bytes = pattern(200_000);
  const { ctx, patches } = context();
  const result = await uploader(64 * 1024).upload(localFile(bytes), ctx);
  expect(result).toEqual({ uploadURL: `${server.base}/files/1` });
  expect(patches).toEqual([{ tus: { uploadUrl: `${server.base}/files/1` } }]);
  const stored = server.uploads.get('/files/1');
  expect(stored?.metadata).toEqual({
    name: 'report.pdf',
    type: 'application/pdf',
    filename: 'report.pdf',
    filetype: 'application/pdf',
    album: 'été',
  });
  expect(sha256(stored?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  expect(server.log.filter((l) => l.startsWith('PATCH'))).toHaveLength(4);
});

test('pause keeps the upload; the next upload continues from the offset the server has', async () => {
  const bytes = pattern(256 * 1024);
  // The second chunk's progress: the first PATCH has had its 204, so the server holds 64 KiB.
  const first = context({ at: 128 * 1024, reason: 'pause' });
  const paused = uploader(64 * 1024).upload(localFile(bytes), first.ctx);
  await expect(paused).rejects.toMatchObject({ message: 'aborted' });
  expect(server.uploads.get('/files/1')?.bytes.length ?? 0).toBeGreaterThanOrEqual(64 * 1024);
  const offset = server.uploads.get('/files/1')?.bytes.length ?? 0;
  expect(offset).toBeLessThan(bytes.length);
  expect(server.log.some((l) => l.startsWith('DELETE'))).toBe(false);

  server.log = [];
  const second = context();
  const resumed = localFile(bytes, { tus: { uploadUrl: `${server.base}/files/1` } });
  expect(await uploader(64 * 1024).upload(resumed, second.ctx)).toEqual({ uploadURL: `${server.base}/files/1` });
  expect(server.log[0]).toBe('HEAD /files/1 200');
  expect(server.log.some((l) => l.startsWith('POST'))).toBe(false);
  expect(server.uploads.size).toBe(1);
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('remove terminates the upload on the server; cancel of an idle file does too', async () => {
  const bytes = pattern(256 * 1024);
  const running = context({ at: 0, reason: 'remove' });
  const removed = uploader(32 * 1024).upload(localFile(bytes), running.ctx);
  await expect(removed).rejects.toMatchObject({ message: 'aborted' });
  await expect.poll(() => server.log.includes('DELETE /files/1 204')).toBe(true);
  expect(server.uploads.has('/files/1')).toBe(false);

  const idle = context({ at: 0, reason: 'pause' });
  const paused = uploader(32 * 1024).upload(localFile(bytes), idle.ctx);
  await expect(paused).rejects.toMatchObject({ message: 'aborted' });
  expect(server.uploads.has('/files/2')).toBe(true);
  await uploader().cancel(localFile(bytes, { tus: { uploadUrl: `${server.base}/files/2` } }));
  expect(server.log).toContain('DELETE /files/2 204');
  expect(server.uploads.size).toBe(0);
});

test('a locked upload fails with the catalogue message and the server answer as details', async () => {
  server.locked = true;
  const { ctx } = context();
  await expect(uploader().upload(localFile(pattern(1000)), ctx)).rejects.toMatchObject({
    message: translate(defaultLocale, 'uploadLocked'),
    status: 423,
    details: 'another request holds this upload',
  });
});

test('a refused creation shows what the server said, not the client library wrapper', async () => {
  server.refusal = { status: 403, type: 'application/json', body: '{"message":"PDF uploads are closed today"}' };
  const { ctx } = context();
  const failed = uploader().upload(localFile(pattern(1000)), ctx);
  await expect(failed).rejects.toMatchObject({
    message: 'PDF uploads are closed today',
    status: 403,
    retryable: false,
    details: undefined,
  });
  server.refusal = { status: 413, type: 'text/plain', body: 'over quota: 2 GiB used\nsecond line' };
  await expect(uploader().upload(localFile(pattern(1000)), ctx)).rejects.toMatchObject({
    message: 'over quota: 2 GiB used',
    status: 413,
  });
  // Nothing readable: the catalogue message, and tus-js-client's wrapper as the details.
  server.refusal = { status: 403, type: 'text/html', body: '<html><body>Forbidden</body></html>' };
  await expect(uploader().upload(localFile(pattern(1000)), ctx)).rejects.toMatchObject({
    message: translate(defaultLocale, 'uploadError'),
    status: 403,
    details: expect.stringMatching(/^tus: unexpected response while creating upload/),
  });
  expect(server.log.filter((l) => l.startsWith('POST'))).toEqual([
    'POST /files/ 403',
    'POST /files/ 413',
    'POST /files/ 403',
  ]);
});

test('server messages: JSON message, first text line, nothing from HTML or empty bodies', () => {
  expect(serverMessage('{"message":"  no  "}')).toBe('no');
  expect(serverMessage('{"error":"x"}')).toBeUndefined();
  expect(serverMessage('{not json')).toBe('{not json');
  expect(serverMessage('upload rejected by the server\n')).toBe('upload rejected by the server');
  expect(serverMessage('<!doctype html><p>502</p>')).toBeUndefined();
  expect(serverMessage('   ')).toBeUndefined();
  expect(serverMessage(undefined)).toBeUndefined();
  const long = serverMessage('x'.repeat(500));
  expect(long?.length).toBe(300);
  expect(long?.endsWith('\u2026')).toBe(true);
});

test("the engine's headers function is called for every request, so a refreshed token is used", async () => {
  const bytes = pattern(200_000);
  const { ctx } = context();
  let issued = 0;
  ctx.headers = async () => ({ Authorization: `Bearer t${++issued}` });
  await uploader(64 * 1024).upload(localFile(bytes), ctx);
  expect(server.authorizations).toEqual([
    'POST Bearer t1',
    'PATCH Bearer t2',
    'PATCH Bearer t3',
    'PATCH Bearer t4',
    'PATCH Bearer t5',
  ]);
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});
