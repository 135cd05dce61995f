// @vitest-environment jsdom
/**
 * TusUploader's small files (up to `smallFileSize`): sent whole in the creation request, from
 * bytes read ahead only when they are the whole file, and without a progress listener when tiny;
 * against the loopback tus server, bytes compared by sha256.
 */
import { expect, test, vi } from 'vitest';
import {
  context,
  localFile,
  loopbackTusServer,
  pattern,
  resumeEntries,
  sha256,
  uploader as uploaderAt,
} from '../test/loopback-tus.ts';
import type { AbortReason } from '../uploader.ts';
import { QUIET_BODY_SIZE, TusUploader } from './tus.ts';

// The package's Node build reads Buffers and streams, not Blobs: the browser build is the one pages run.
vi.mock('tus-js-client', () => import('tus-js-client/lib.esm/browser/index.js' as string));

const server = loopbackTusServer();
/** An uploader on the create-then-PATCH path whatever the size (small files have their own tests). */
const uploader = (chunkSize?: number) => uploaderAt(server.base, chunkSize);

test('a small file goes whole in the creation request and leaves no resume entry behind', async () => {
  const bytes = pattern(10 * 1024);
  const { ctx, patches, progress } = context();
  // Resume on (the default): a small file is still neither looked up nor recorded.
  const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [] });
  const setItem = vi.spyOn(Storage.prototype, 'setItem');
  try {
    expect(await small.upload(localFile(bytes), ctx)).toEqual({ uploadURL: `${server.base}/files/1` });
    expect(setItem).not.toHaveBeenCalled();
  } finally {
    setItem.mockRestore();
  }
  expect(server.log).toEqual(['POST /files/ 201']);
  // Done with its one answer: no resume URL to keep on the record.
  expect(patches).toEqual([]);
  expect(progress.at(-1)).toBe(bytes.length);
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  expect(server.uploads.get('/files/1')?.metadata.filename).toBe('report.pdf');
});

test('a file over smallFileSize is created empty, sent by PATCH and recorded for resuming', async () => {
  const bytes = pattern(4096);
  // One File for both sessions: its lastModified is part of the resume fingerprint.
  const file = localFile(bytes);
  const large = (stop?: { at: number; reason: AbortReason }) =>
    new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [], smallFileSize: 4095 }).upload(
      file,
      context(stop).ctx,
    );
  // Paused as soon as its URL is known: the resume entry stays for the next session.
  await expect(large({ at: 0, reason: 'pause' })).rejects.toMatchObject({ message: 'aborted' });
  expect(resumeEntries()).toHaveLength(1);
  expect(server.uploads.get('/files/1')?.bytes.length).toBe(0);

  server.log = [];
  expect(await large()).toEqual({ uploadURL: `${server.base}/files/1` });
  expect(server.log).toEqual(['HEAD /files/1 200', 'PATCH /files/1 204']);
  expect(resumeEntries()).toEqual([]);
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('smallFileSize 0 sends even a tiny file as creation then PATCH', async () => {
  const bytes = pattern(100);
  await uploader().upload(localFile(bytes), context().ctx);
  expect(server.log).toEqual(['POST /files/ 201', 'PATCH /files/1 204']);
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file the server took only part of keeps its URL and sends the rest by PATCH', async () => {
  const bytes = pattern(10 * 1024);
  const { ctx, patches } = context();
  const chunked = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [], chunkSize: 4096 });
  expect(await chunked.upload(localFile(bytes), ctx)).toEqual({ uploadURL: `${server.base}/files/1` });
  expect(server.log).toEqual(['POST /files/ 201', 'PATCH /files/1 204', 'PATCH /files/1 204']);
  expect(patches).toEqual([{ tus: { uploadUrl: `${server.base}/files/1` } }]);
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file read ahead is sent from its bytes; bytes that are not the whole file are not', async () => {
  const bytes = pattern(10 * 1024);
  // Other content of the same length shows which body went: the engine's bytes, not the Blob.
  const readAhead = bytes.map((b) => b ^ 0xff);
  const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [] });
  const first = context();
  await small.upload(localFile(bytes), { ...first.ctx, bytes: () => readAhead });
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(readAhead));
  expect(first.progress.at(-1)).toBe(bytes.length);
  // Bytes of another length (a stale read) are ignored: the file itself goes.
  const second = context();
  await small.upload(localFile(bytes), { ...second.ctx, bytes: () => readAhead.subarray(1) });
  expect(sha256(server.uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  expect(server.log).toEqual(['POST /files/ 201', 'POST /files/ 201']);
});

test('a file over smallFileSize never sends bytes read ahead, even when offered', async () => {
  const bytes = pattern(10 * 1024);
  const { ctx } = context();
  await uploader().upload(localFile(bytes), { ...ctx, bytes: () => bytes.map((b) => b ^ 0xff) });
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file without bytes read ahead is sent as the file itself, never a slice of it', async () => {
  const bytes = pattern(10 * 1024);
  const slice = vi.spyOn(Blob.prototype, 'slice');
  try {
    const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [] });
    await small.upload(localFile(bytes), context().ctx);
    expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
    expect(slice).not.toHaveBeenCalled();
  } finally {
    slice.mockRestore();
  }
});

test('a tiny file is sent without an upload-progress listener and still reports its whole size', async () => {
  // What each request had on `xhr.upload` when it was sent.
  const listened: boolean[] = [];
  const original = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null) {
    listened.push(this.upload.onprogress !== null);
    return original.call(this, body);
  };
  try {
    const tiny = pattern(QUIET_BODY_SIZE);
    const { ctx, progress } = context();
    await new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [] }).upload(localFile(tiny), ctx);
    expect(progress.at(-1)).toBe(tiny.length);
    expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(tiny));
    // One byte more: its body's progress is reported again.
    const larger = pattern(QUIET_BODY_SIZE + 1);
    await new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [] }).upload(
      localFile(larger),
      context().ctx,
    );
    expect(sha256(server.uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(larger));
    expect(listened).toEqual([false, true]);
  } finally {
    XMLHttpRequest.prototype.send = original;
  }
});
