/**
 * Recovery tells the truth: a completion the page has seen reaches the records when the page
 * goes away, even with no timer or promise left to run, and a restored upload the server has
 * finished comes back complete (asked with a tus HEAD on loopback), never as a ghost or as work
 * left. Each reload is a new engine over the same fake IndexedDB ("browser profile").
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IDBFactory } from 'fake-indexeddb';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import { ManualUploader } from '../test/recovery-page.ts';
import type { Uploader } from '../uploader.ts';
import { TusUploader } from '../uploaders/tus.ts';

/** A tus server's HEAD on loopback: each upload's offset and length; every request recorded. */
const uploads = new Map<string, { offset: number; length: number }>();
const requests: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const upload = uploads.get(req.url ?? '');
    if (req.method !== 'HEAD' || !upload) return void res.writeHead(404).end();
    res.writeHead(200, {
      'tus-resumable': '1.0.0',
      'upload-offset': String(upload.offset),
      'upload-length': String(upload.length),
      'cache-control': 'no-store',
    });
    res.end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

/** Bounded waits, generous for a loaded machine. */
const WAIT = { timeout: 10_000 };

const engines: Ferry[] = [];
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  for (const e of engines.splice(0)) e.destroy();
  uploads.clear();
  requests.length = 0;
});

/** One page load over `db`. */
async function page(db: IDBFactory, uploader: Uploader = new ManualUploader(), maxCopySize?: number) {
  const ferry = new Ferry({
    uploader,
    online: { isOnline: () => true },
    recovery: { indexedDB: db, opfs: false, throttle: 20, maxCopySize },
  });
  engines.push(ferry);
  await ferry.recovery?.ready();
  await ferry.recovery?.flush();
  return ferry;
}

/** Lets the engine's promises run (not its timers). */
async function microtasks() {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
}

const file = (name: string, size: number) =>
  new File([new Uint8Array(size).fill(7)], name, { type: 'application/octet-stream', lastModified: 1_700_000_000_000 });

test('a completion the page has seen reaches the records when it goes away, though no timer runs again', async () => {
  const window = new EventTarget();
  vi.stubGlobal('addEventListener', window.addEventListener.bind(window));
  vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window));
  const db = new IDBFactory();
  const uploader = new ManualUploader();
  const first = await page(db, uploader);
  const ids = first.addFiles([{ data: file('a.bin', 3) }, { data: file('b.bin', 4) }]);
  void first.upload();
  await vi.waitFor(() => expect(uploader.calls).toHaveLength(2), WAIT);
  await first.recovery?.flush();

  // From here on this page runs no timer: it is closed right after it hears the answers.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  for (const call of uploader.calls) call.resolve({ uploadURL: `${base}/files/${call.file.name}` });
  await microtasks();
  expect(first.getFiles().map((f) => f.state)).toEqual(['complete', 'complete']);
  window.dispatchEvent(new Event('pagehide'));
  vi.useRealTimers();
  await new Promise((ok) => setImmediate(ok));

  // Both were complete: the upload was over, nothing comes back and nothing is sent again.
  const again = new ManualUploader();
  const second = await page(db, again);
  expect(second.getFiles()).toEqual([]);
  expect(second.recovery?.getSnapshot()).toEqual({ restored: 0, ghosts: [], needPermission: [] });
  expect(again.calls).toEqual([]);
  expect(await second.recovery?.stored()).toEqual({ records: 0, copies: 0 });
  expect(ids).toHaveLength(2);
});

test('a restored upload the server has finished comes back complete, not as a ghost; others as before', async () => {
  const db = new IDBFactory();
  const uploader = new ManualUploader();
  // Copies up to 2 bytes: the 3-byte files come back as ghosts unless the server says otherwise.
  const first = await page(db, uploader, 2);
  const [done, half, unknown, small] = first.addFiles([
    { data: file('done.bin', 3) },
    { data: file('half.bin', 3) },
    { data: file('unknown.bin', 3) },
    { data: file('small.bin', 2) },
  ]) as [string, string, string, string];
  void first.upload();
  await vi.waitFor(() => expect(uploader.calls).toHaveLength(4), WAIT);
  const urls = new Map([
    [done, '/files/done'],
    [half, '/files/half'],
    [small, '/files/small'],
  ]);
  for (const call of uploader.calls) {
    const url = urls.get(call.file.id);
    if (url) call.ctx.patchFile({ tus: { uploadUrl: `${base}${url}` } });
  }
  await first.recovery?.flush();
  first.destroy();
  // The page went away before it heard these answers; the server finished two of them.
  uploads.set('/files/done', { offset: 3, length: 3 });
  uploads.set('/files/half', { offset: 1, length: 3 });
  uploads.set('/files/small', { offset: 2, length: 2 });

  const second = await page(db, new TusUploader({ endpoint: `${base}/files/` }), 2);
  const state = (id: string) => {
    const f = second.getFile(id);
    return [f?.state, f?.ghost === true, f?.uploadURL];
  };
  expect(state(done)).toEqual(['complete', false, `${base}/files/done`]);
  expect(state(small)).toEqual(['complete', false, `${base}/files/small`]);
  expect(second.getFile(done)?.progress).toMatchObject({ percentage: 100, uploadComplete: true, bytesUploaded: 3 });
  // Not finished, or nothing to ask: as before, ghosts to add again.
  expect(state(half)).toEqual(['paused', true, undefined]);
  expect(state(unknown)).toEqual(['paused', true, undefined]);
  expect(second.recovery?.getSnapshot()).toEqual({ restored: 4, ghosts: [half, unknown], needPermission: [] });
  expect(second.getState().ghosts).toBe(2);
  // Asked with one HEAD each; nothing sent, nothing created.
  expect(requests.sort()).toEqual(['HEAD /files/done', 'HEAD /files/half', 'HEAD /files/small']);
  // The finished ones are written complete, and the kept bytes of the small one freed.
  expect(await second.recovery?.stored()).toEqual({ records: 4, copies: 0 });
  second.destroy();
  const third = await page(db, new ManualUploader(), 2);
  expect(third.getFiles().map((f) => [f.name, f.state])).toEqual([
    ['done.bin', 'complete'],
    ['half.bin', 'paused'],
    ['unknown.bin', 'paused'],
    ['small.bin', 'complete'],
  ]);
});

test('a server that cannot say (an error, or gone) leaves a restored upload as it was', async () => {
  const db = new IDBFactory();
  const uploader = new ManualUploader();
  const first = await page(db, uploader, 2);
  const id = first.addFile({ data: file('lost.bin', 3) }) as string;
  void first.upload();
  await vi.waitFor(() => expect(uploader.calls).toHaveLength(1), WAIT);
  uploader.calls[0]?.ctx.patchFile({ tus: { uploadUrl: `${base}/files/expired` } });
  await first.recovery?.flush();
  first.destroy();

  const second = await page(db, new TusUploader({ endpoint: `${base}/files/` }), 2);
  expect(requests.filter((r) => r.endsWith('/expired'))).toEqual(['HEAD /files/expired']);
  expect(second.getFile(id)?.ghost).toBe(true);
  expect(second.recovery?.getSnapshot().ghosts).toEqual([id]);
});
