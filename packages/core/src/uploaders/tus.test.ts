// @vitest-environment jsdom
/**
 * TusUploader against a small tus 1.0 server on loopback (creation, HEAD, PATCH, termination;
 * it refuses any request that breaks the protocol), through tus-js-client's browser build on
 * jsdom's XMLHttpRequest: stored bytes are compared by sha256 with the bytes sent.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { defaultLocale, translate } from '../locale.ts';
import type { FerryFile } from '../types.ts';
import type { AbortReason, UploadContext } from '../uploader.ts';
import { QUIET_BODY_SIZE, serverMessage, TusUploader } from './tus.ts';
import type { WorkerAnswer, WorkerCall } from './tus-worker.ts';

// The package's Node build reads Buffers and streams, not Blobs: the browser build is the one pages run.
vi.mock('tus-js-client', () => import('tus-js-client/lib.esm/browser/index.js' as string));

interface Stored {
  length: number;
  metadata: Record<string, string>;
  bytes: Buffer;
}

let server: Server;
let base = '';
let uploads: Map<string, Stored>;
let log: string[];
/** `METHOD Authorization` of every answered request. */
let authorizations: string[] = [];
let locked = false;
/** When set, creation is refused with this answer (as a pre-create hook would). */
let refusal: { status: number; body: string; type: string } | undefined;
let next = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', '*');
    res.setHeader('access-control-allow-methods', '*');
    res.setHeader('access-control-expose-headers', 'Location, Upload-Offset, Upload-Length');
    if (req.method === 'OPTIONS') return void res.end();
    const path = new URL(req.url ?? '/', base).pathname;
    const answer = (status: number, headers: Record<string, string> = {}, body = '') => {
      log.push(`${req.method} ${path} ${status}`);
      authorizations.push(`${req.method} ${req.headers.authorization ?? '-'}`);
      res.writeHead(status, { 'tus-resumable': '1.0.0', ...headers }).end(body);
    };
    if (req.headers['tus-resumable'] !== '1.0.0') return answer(412);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const upload = uploads.get(path);
      if (req.method === 'POST' && path === '/files/' && refusal) {
        return answer(refusal.status, { 'content-type': refusal.type }, refusal.body);
      }
      if (req.method === 'POST' && path === '/files/') {
        const length = Number(req.headers['upload-length']);
        if (!Number.isInteger(length)) return answer(400);
        const metadata: Record<string, string> = {};
        for (const pair of String(req.headers['upload-metadata'] ?? '').split(',')) {
          const [key = '', value = ''] = pair.trim().split(' ');
          if (key) metadata[key] = Buffer.from(value, 'base64').toString('utf8');
        }
        next += 1;
        // creation-with-upload: the body, if any, is the upload's first bytes.
        const withData = req.headers['content-type'] === 'application/offset+octet-stream';
        const bytes = withData ? Buffer.concat(chunks) : Buffer.alloc(0);
        if (bytes.length > length) return answer(413);
        uploads.set(`/files/${next}`, { length, metadata, bytes });
        const headers: Record<string, string> = { location: `/files/${next}` };
        if (withData) headers['upload-offset'] = String(bytes.length);
        return answer(201, headers);
      }
      if (!upload) return answer(404);
      if (req.method === 'HEAD') {
        return answer(200, { 'upload-offset': String(upload.bytes.length), 'upload-length': String(upload.length) });
      }
      if (req.method === 'DELETE') {
        uploads.delete(path);
        return answer(204);
      }
      if (req.method !== 'PATCH') return answer(405);
      if (locked) return answer(423, {}, 'another request holds this upload');
      if (req.headers['content-type'] !== 'application/offset+octet-stream') return answer(415);
      if (Number(req.headers['upload-offset']) !== upload.bytes.length) return answer(409);
      upload.bytes = Buffer.concat([upload.bytes, ...chunks]);
      return answer(204, { 'upload-offset': String(upload.bytes.length) });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));
beforeEach(() => {
  authorizations = [];
  uploads = new Map();
  log = [];
  locked = false;
  refusal = undefined;
  next = 0;
  localStorage.clear();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function pattern(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 7 + (i >> 8)) & 255;
  return bytes;
}

function localFile(bytes: Uint8Array<ArrayBuffer>, extra: Partial<FerryFile> = {}): FerryFile {
  return {
    id: 'f1',
    name: 'report.pdf',
    type: 'application/pdf',
    data: new File([bytes], 'report.pdf', { type: 'application/pdf' }),
    size: bytes.length,
    meta: { name: 'report.pdf', type: 'application/pdf', album: 'été' },
    ...extra,
  } as unknown as FerryFile;
}

/**
 * A context that records patches and progress; `stop` aborts with its reason once that many
 * bytes were reported (0: as soon as the upload URL is known). Loopback is too fast to abort
 * from outside the callbacks.
 */
function context(stop?: { at: number; reason: AbortReason }) {
  const controller = new AbortController();
  let reason: AbortReason | undefined;
  const patches: unknown[] = [];
  const progress: number[] = [];
  const abort = (why: AbortReason) => {
    reason = why;
    controller.abort();
  };
  const check = () => {
    if (stop && !controller.signal.aborted && (progress.at(-1) ?? 0) >= stop.at) abort(stop.reason);
  };
  const ctx: UploadContext = {
    signal: controller.signal,
    onProgress: (sent) => {
      progress.push(sent);
      check();
    },
    patchFile: (patch) => {
      patches.push(patch);
      check();
    },
    reason: () => reason,
    isOnline: () => true,
    i18n: (key, vars) => translate(defaultLocale, key, vars),
  };
  return { ctx, patches, progress, abort };
}

/** An uploader on the create-then-PATCH path whatever the size (small files have their own tests). */
const uploader = (chunkSize?: number) =>
  new TusUploader({
    endpoint: `${base}/files/`,
    resume: false,
    retryDelays: [],
    smallFileSize: 0,
    ...(chunkSize ? { chunkSize } : {}),
  });

/** tus-js-client's resume entries in the browser's storage. */
const resumeEntries = () => Object.keys(localStorage).filter((key) => key.startsWith('tus::'));

test('an upload stores the exact bytes with the metadata, and keeps the upload URL on the record', async () => {
  const bytes = pattern(200_000);
  const { ctx, patches } = context();
  const result = await uploader(64 * 1024).upload(localFile(bytes), ctx);
  expect(result).toEqual({ uploadURL: `${base}/files/1` });
  expect(patches).toEqual([{ tus: { uploadUrl: `${base}/files/1` } }]);
  const stored = uploads.get('/files/1');
  expect(stored?.metadata).toEqual({
    name: 'report.pdf',
    type: 'application/pdf',
    filename: 'report.pdf',
    filetype: 'application/pdf',
    album: 'été',
  });
  expect(sha256(stored?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  expect(log.filter((l) => l.startsWith('PATCH'))).toHaveLength(4);
});

test('pause keeps the upload; the next upload continues from the offset the server has', async () => {
  const bytes = pattern(256 * 1024);
  // The second chunk's progress: the first PATCH has had its 204, so the server holds 64 KiB.
  const first = context({ at: 128 * 1024, reason: 'pause' });
  const paused = uploader(64 * 1024).upload(localFile(bytes), first.ctx);
  await expect(paused).rejects.toMatchObject({ message: 'aborted' });
  expect(uploads.get('/files/1')?.bytes.length ?? 0).toBeGreaterThanOrEqual(64 * 1024);
  const offset = uploads.get('/files/1')?.bytes.length ?? 0;
  expect(offset).toBeLessThan(bytes.length);
  expect(log.some((l) => l.startsWith('DELETE'))).toBe(false);

  log = [];
  const second = context();
  const resumed = localFile(bytes, { tus: { uploadUrl: `${base}/files/1` } });
  expect(await uploader(64 * 1024).upload(resumed, second.ctx)).toEqual({ uploadURL: `${base}/files/1` });
  expect(log[0]).toBe('HEAD /files/1 200');
  expect(log.some((l) => l.startsWith('POST'))).toBe(false);
  expect(uploads.size).toBe(1);
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('remove terminates the upload on the server; cancel of an idle file does too', async () => {
  const bytes = pattern(256 * 1024);
  const running = context({ at: 0, reason: 'remove' });
  const removed = uploader(32 * 1024).upload(localFile(bytes), running.ctx);
  await expect(removed).rejects.toMatchObject({ message: 'aborted' });
  await expect.poll(() => log.includes('DELETE /files/1 204')).toBe(true);
  expect(uploads.has('/files/1')).toBe(false);

  const idle = context({ at: 0, reason: 'pause' });
  const paused = uploader(32 * 1024).upload(localFile(bytes), idle.ctx);
  await expect(paused).rejects.toMatchObject({ message: 'aborted' });
  expect(uploads.has('/files/2')).toBe(true);
  await uploader().cancel(localFile(bytes, { tus: { uploadUrl: `${base}/files/2` } }));
  expect(log).toContain('DELETE /files/2 204');
  expect(uploads.size).toBe(0);
});

test('a locked upload fails with the catalogue message and the server answer as details', async () => {
  locked = true;
  const { ctx } = context();
  await expect(uploader().upload(localFile(pattern(1000)), ctx)).rejects.toMatchObject({
    message: translate(defaultLocale, 'uploadLocked'),
    status: 423,
    details: 'another request holds this upload',
  });
});

test('a refused creation shows what the server said, not the client library wrapper', async () => {
  refusal = { status: 403, type: 'application/json', body: '{"message":"PDF uploads are closed today"}' };
  const { ctx } = context();
  const failed = uploader().upload(localFile(pattern(1000)), ctx);
  await expect(failed).rejects.toMatchObject({
    message: 'PDF uploads are closed today',
    status: 403,
    retryable: false,
    details: undefined,
  });
  refusal = { status: 413, type: 'text/plain', body: 'over quota: 2 GiB used\nsecond line' };
  await expect(uploader().upload(localFile(pattern(1000)), ctx)).rejects.toMatchObject({
    message: 'over quota: 2 GiB used',
    status: 413,
  });
  // Nothing readable: the catalogue message, and tus-js-client's wrapper as the details.
  refusal = { status: 403, type: 'text/html', body: '<html><body>Forbidden</body></html>' };
  await expect(uploader().upload(localFile(pattern(1000)), ctx)).rejects.toMatchObject({
    message: translate(defaultLocale, 'uploadError'),
    status: 403,
    details: expect.stringMatching(/^tus: unexpected response while creating upload/),
  });
  expect(log.filter((l) => l.startsWith('POST'))).toEqual(['POST /files/ 403', 'POST /files/ 413', 'POST /files/ 403']);
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
  expect(authorizations).toEqual([
    'POST Bearer t1',
    'PATCH Bearer t2',
    'PATCH Bearer t3',
    'PATCH Bearer t4',
    'PATCH Bearer t5',
  ]);
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file goes whole in the creation request and leaves no resume entry behind', async () => {
  const bytes = pattern(10 * 1024);
  const { ctx, patches, progress } = context();
  // Resume on (the default): a small file is still neither looked up nor recorded.
  const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [] });
  const setItem = vi.spyOn(Storage.prototype, 'setItem');
  try {
    expect(await small.upload(localFile(bytes), ctx)).toEqual({ uploadURL: `${base}/files/1` });
    expect(setItem).not.toHaveBeenCalled();
  } finally {
    setItem.mockRestore();
  }
  expect(log).toEqual(['POST /files/ 201']);
  // Done with its one answer: no resume URL to keep on the record.
  expect(patches).toEqual([]);
  expect(progress.at(-1)).toBe(bytes.length);
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  expect(uploads.get('/files/1')?.metadata.filename).toBe('report.pdf');
});

test('a file over smallFileSize is created empty, sent by PATCH and recorded for resuming', async () => {
  const bytes = pattern(4096);
  // One File for both sessions: its lastModified is part of the resume fingerprint.
  const file = localFile(bytes);
  const large = (stop?: { at: number; reason: AbortReason }) =>
    new TusUploader({ endpoint: `${base}/files/`, retryDelays: [], smallFileSize: 4095 }).upload(
      file,
      context(stop).ctx,
    );
  // Paused as soon as its URL is known: the resume entry stays for the next session.
  await expect(large({ at: 0, reason: 'pause' })).rejects.toMatchObject({ message: 'aborted' });
  expect(resumeEntries()).toHaveLength(1);
  expect(uploads.get('/files/1')?.bytes.length).toBe(0);

  log = [];
  expect(await large()).toEqual({ uploadURL: `${base}/files/1` });
  expect(log).toEqual(['HEAD /files/1 200', 'PATCH /files/1 204']);
  expect(resumeEntries()).toEqual([]);
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('smallFileSize 0 sends even a tiny file as creation then PATCH', async () => {
  const bytes = pattern(100);
  await uploader().upload(localFile(bytes), context().ctx);
  expect(log).toEqual(['POST /files/ 201', 'PATCH /files/1 204']);
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file the server took only part of keeps its URL and sends the rest by PATCH', async () => {
  const bytes = pattern(10 * 1024);
  const { ctx, patches } = context();
  const chunked = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [], chunkSize: 4096 });
  expect(await chunked.upload(localFile(bytes), ctx)).toEqual({ uploadURL: `${base}/files/1` });
  expect(log).toEqual(['POST /files/ 201', 'PATCH /files/1 204', 'PATCH /files/1 204']);
  expect(patches).toEqual([{ tus: { uploadUrl: `${base}/files/1` } }]);
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file read ahead is sent from its bytes; bytes that are not the whole file are not', async () => {
  const bytes = pattern(10 * 1024);
  // Other content of the same length shows which body went: the engine's bytes, not the Blob.
  const readAhead = bytes.map((b) => b ^ 0xff);
  const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [] });
  const first = context();
  await small.upload(localFile(bytes), { ...first.ctx, bytes: () => readAhead });
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(readAhead));
  expect(first.progress.at(-1)).toBe(bytes.length);
  // Bytes of another length (a stale read) are ignored: the file itself goes.
  const second = context();
  await small.upload(localFile(bytes), { ...second.ctx, bytes: () => readAhead.subarray(1) });
  expect(sha256(uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  expect(log).toEqual(['POST /files/ 201', 'POST /files/ 201']);
});

test('a file over smallFileSize never sends bytes read ahead, even when offered', async () => {
  const bytes = pattern(10 * 1024);
  const { ctx } = context();
  await uploader().upload(localFile(bytes), { ...ctx, bytes: () => bytes.map((b) => b ^ 0xff) });
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});

test('a small file without bytes read ahead is sent as the file itself, never a slice of it', async () => {
  const bytes = pattern(10 * 1024);
  const slice = vi.spyOn(Blob.prototype, 'slice');
  try {
    const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [] });
    await small.upload(localFile(bytes), context().ctx);
    expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
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
    await new TusUploader({ endpoint: `${base}/files/`, retryDelays: [] }).upload(localFile(tiny), ctx);
    expect(progress.at(-1)).toBe(tiny.length);
    expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(tiny));
    // One byte more: its body's progress is reported again.
    const larger = pattern(QUIET_BODY_SIZE + 1);
    await new TusUploader({ endpoint: `${base}/files/`, retryDelays: [] }).upload(localFile(larger), context().ctx);
    expect(sha256(uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(larger));
    expect(listened).toEqual([false, true]);
  } finally {
    XMLHttpRequest.prototype.send = original;
  }
});

/**
 * A stand-in for the browser's Worker (jsdom has none): it runs the source the page hands it
 * (from the `blob:` URL the uploader makes) on a scope of its own, with jsdom's XMLHttpRequest,
 * and passes messages both ways asynchronously, as a Worker does. `holdAnswers` keeps the
 * Worker's answers back until `release()`; `fail()` is the Worker's `error` event.
 */
class StandInWorker {
  static made: StandInWorker[] = [];
  /** Every message the page posted. */
  readonly calls: WorkerCall[] = [];
  holdAnswers = false;
  readonly #held: WorkerAnswer[] = [];
  readonly #page: { message: ((event: { data: WorkerAnswer }) => void)[]; error: (() => void)[] } = {
    message: [],
    error: [],
  };
  readonly #inside: ((event: { data: WorkerCall }) => void)[] = [];
  readonly #started: Promise<void>;

  constructor(url: string) {
    StandInWorker.made.push(this);
    const blob = blobUrls.get(url);
    if (!blob) throw new Error(`no blob at ${url}`);
    this.#started = blob.text().then((source) => {
      const scope = {
        addEventListener: (_type: 'message', listener: (event: { data: WorkerCall }) => void) =>
          this.#inside.push(listener),
        postMessage: (data: WorkerAnswer) => {
          if (this.holdAnswers) this.#held.push(data);
          else setTimeout(() => this.#answer(data));
        },
        XMLHttpRequest,
      };
      new Function('self', source)(scope);
    });
  }

  postMessage(data: WorkerCall): void {
    this.calls.push(data);
    void this.#started.then(() => {
      for (const listener of this.#inside) listener({ data });
    });
  }

  addEventListener(type: 'message' | 'error', listener: never): void {
    this.#page[type].push(listener);
  }

  /** The answers the Worker has posted while held (the requests were answered by the server). */
  held(): number {
    return this.#held.length;
  }

  release(): void {
    this.holdAnswers = false;
    for (const data of this.#held.splice(0)) setTimeout(() => this.#answer(data));
  }

  fail(): void {
    for (const listener of this.#page.error) listener();
  }

  #answer(data: WorkerAnswer): void {
    for (const listener of this.#page.message) listener({ data });
  }
}

const blobUrls = new Map<string, Blob>();

/** Runs `body` with the stand-in Worker and `blob:` URLs installed, as a browser page has them. */
async function withWorkers(body: () => Promise<void>): Promise<void> {
  StandInWorker.made = [];
  const urls = URL as unknown as { createObjectURL?: unknown };
  const before = urls.createObjectURL;
  urls.createObjectURL = (blob: Blob) => {
    const url = `blob:${base}/${blobUrls.size}`;
    blobUrls.set(url, blob);
    return url;
  };
  vi.stubGlobal('Worker', StandInWorker);
  try {
    await body();
  } finally {
    vi.unstubAllGlobals();
    urls.createObjectURL = before;
  }
}

/** The requests the page posted to the Worker, as `METHOD URL`. */
const workerRequests = (worker: StandInWorker | undefined) =>
  (worker?.calls ?? []).flatMap((call) => ('method' in call ? [`${call.method} ${call.url}`] : []));

test('with uploadWorker, small files are sent by the Worker: exact bytes, one POST each', async () => {
  await withWorkers(async () => {
    const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [], uploadWorker: true });
    const bytes = pattern(10 * 1024);
    const first = context();
    expect(await small.upload(localFile(bytes), first.ctx)).toEqual({ uploadURL: `${base}/files/1` });
    // Bytes read ahead go as bytes (copied into the message).
    const readAhead = bytes.map((b) => b ^ 0xff);
    await small.upload(localFile(bytes), { ...context().ctx, bytes: () => readAhead });
    // A body over QUIET_BODY_SIZE reports its progress: the page sends it itself.
    await small.upload(localFile(pattern(QUIET_BODY_SIZE + 1)), context().ctx);
    expect(StandInWorker.made).toHaveLength(1);
    expect(workerRequests(StandInWorker.made[0])).toEqual([`POST ${base}/files/`, `POST ${base}/files/`]);
    expect(log).toEqual(['POST /files/ 201', 'POST /files/ 201', 'POST /files/ 201']);
    expect(first.progress.at(-1)).toBe(bytes.length);
    expect(first.patches).toEqual([]);
    expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
    expect(sha256(uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(readAhead));
    expect(uploads.get('/files/1')?.metadata.filename).toBe('report.pdf');
  });
});

test("with uploadWorker, a relative endpoint reaches the Worker resolved against the page (a blob: Worker can't resolve it)", async () => {
  await withWorkers(async () => {
    const small = new TusUploader({ endpoint: '/files/', retryDelays: [], uploadWorker: true });
    const { ctx, abort } = context();
    const running = small.upload(localFile(pattern(1000)), ctx);
    const worker = StandInWorker.made[0] as StandInWorker;
    worker.holdAnswers = true;
    expect(workerRequests(worker)).toEqual([]);
    await expect.poll(() => workerRequests(worker)).toEqual([`POST ${new URL('/files/', window.location.href).href}`]);
    abort('cancel');
    await expect(running).rejects.toMatchObject({ message: 'aborted' });
  });
});

test('with uploadWorker, a refused creation shows what the server said, with its status', async () => {
  await withWorkers(async () => {
    refusal = { status: 403, type: 'application/json', body: '{"message":"PDF uploads are closed today"}' };
    const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [], uploadWorker: true });
    await expect(small.upload(localFile(pattern(1000)), context().ctx)).rejects.toMatchObject({
      message: 'PDF uploads are closed today',
      status: 403,
      retryable: false,
    });
    expect(workerRequests(StandInWorker.made[0])).toEqual([`POST ${base}/files/`]);
  });
});

test('with uploadWorker, pause during a request aborts it in the Worker; its late answer is ignored', async () => {
  await withWorkers(async () => {
    const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [], uploadWorker: true });
    const { ctx, abort, progress } = context();
    const running = small.upload(localFile(pattern(1000)), ctx);
    // The Worker is made with the first small upload; its first answer is held back.
    const worker = StandInWorker.made[0] as StandInWorker;
    worker.holdAnswers = true;
    await expect.poll(() => worker.held()).toBe(1);
    abort('pause');
    await expect(running).rejects.toMatchObject({ message: 'aborted' });
    expect(worker.calls.at(-1)).toEqual({ abort: 0 });
    worker.release();
    await new Promise((ok) => setTimeout(ok, 20));
    // Nothing reported the file done after the pause.
    expect(progress.at(-1)).toBe(0);
  });
});

test('a Worker that fails fails its open request; the retry and every later request go from the page', async () => {
  await withWorkers(async () => {
    const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [0], uploadWorker: true });
    const bytes = pattern(2000);
    const { ctx } = context();
    const running = small.upload(localFile(bytes), ctx);
    const worker = StandInWorker.made[0] as StandInWorker;
    worker.holdAnswers = true;
    // The Worker's request reached the server; its answer is held when the Worker fails.
    await expect.poll(() => worker.held()).toBe(1);
    worker.fail();
    expect(await running).toEqual({ uploadURL: `${base}/files/2` });
    await small.upload(localFile(bytes), context().ctx);
    expect(worker.calls).toHaveLength(1);
    expect(log).toEqual(['POST /files/ 201', 'POST /files/ 201', 'POST /files/ 201']);
    expect(sha256(uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
    expect(sha256(uploads.get('/files/3')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  });
});

test('with uploadWorker where no Worker can be made (no Worker here), the page sends the file itself', async () => {
  const small = new TusUploader({ endpoint: `${base}/files/`, retryDelays: [], uploadWorker: true });
  const bytes = pattern(10 * 1024);
  expect(await small.upload(localFile(bytes), context().ctx)).toEqual({ uploadURL: `${base}/files/1` });
  expect(sha256(uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});
