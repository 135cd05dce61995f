// @vitest-environment jsdom
/**
 * TusUploader with `uploadWorker`: small files are sent from a Worker (a stand-in here, since
 * jsdom has none, running the very source the page hands to a real one), falling back to the page
 * when no Worker can be made or it fails; against the loopback tus server, bytes compared by sha256.
 */
import { expect, test, vi } from 'vitest';
import { context, localFile, loopbackTusServer, pattern, sha256 } from '../test/loopback-tus.ts';
import { QUIET_BODY_SIZE, TusUploader } from './tus.ts';
import type { WorkerAnswer, WorkerCall } from './tus-worker.ts';

// The package's Node build reads Buffers and streams, not Blobs: the browser build is the one pages run.
vi.mock('tus-js-client', () => import('tus-js-client/lib.esm/browser/index.js' as string));

const server = loopbackTusServer();

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
    const url = `blob:${server.base}/${blobUrls.size}`;
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
    const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [], uploadWorker: true });
    const bytes = pattern(10 * 1024);
    const first = context();
    expect(await small.upload(localFile(bytes), first.ctx)).toEqual({ uploadURL: `${server.base}/files/1` });
    // Bytes read ahead go as bytes (copied into the message).
    const readAhead = bytes.map((b) => b ^ 0xff);
    await small.upload(localFile(bytes), { ...context().ctx, bytes: () => readAhead });
    // A body over QUIET_BODY_SIZE reports its progress: the page sends it itself.
    await small.upload(localFile(pattern(QUIET_BODY_SIZE + 1)), context().ctx);
    expect(StandInWorker.made).toHaveLength(1);
    expect(workerRequests(StandInWorker.made[0])).toEqual([`POST ${server.base}/files/`, `POST ${server.base}/files/`]);
    expect(server.log).toEqual(['POST /files/ 201', 'POST /files/ 201', 'POST /files/ 201']);
    expect(first.progress.at(-1)).toBe(bytes.length);
    expect(first.patches).toEqual([]);
    expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
    expect(sha256(server.uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(readAhead));
    expect(server.uploads.get('/files/1')?.metadata.filename).toBe('report.pdf');
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
    server.refusal = {
      status: 403,
      type: 'application/json',
      body: '{"message":"PDF uploads are closed today"}',
    };
    const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [], uploadWorker: true });
    await expect(small.upload(localFile(pattern(1000)), context().ctx)).rejects.toMatchObject({
      message: 'PDF uploads are closed today',
      status: 403,
      retryable: false,
    });
    expect(workerRequests(StandInWorker.made[0])).toEqual([`POST ${server.base}/files/`]);
  });
});

test('with uploadWorker, pause during a request aborts it in the Worker; its late answer is ignored', async () => {
  await withWorkers(async () => {
    const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [], uploadWorker: true });
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
    const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [0], uploadWorker: true });
    const bytes = pattern(2000);
    const { ctx } = context();
    const running = small.upload(localFile(bytes), ctx);
    const worker = StandInWorker.made[0] as StandInWorker;
    worker.holdAnswers = true;
    // The Worker's request reached the server; its answer is held when the Worker fails.
    await expect.poll(() => worker.held()).toBe(1);
    worker.fail();
    expect(await running).toEqual({ uploadURL: `${server.base}/files/2` });
    await small.upload(localFile(bytes), context().ctx);
    expect(worker.calls).toHaveLength(1);
    expect(server.log).toEqual(['POST /files/ 201', 'POST /files/ 201', 'POST /files/ 201']);
    expect(sha256(server.uploads.get('/files/2')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
    expect(sha256(server.uploads.get('/files/3')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
  });
});

test('with uploadWorker where no Worker can be made (no Worker here), the page sends the file itself', async () => {
  const small = new TusUploader({ endpoint: `${server.base}/files/`, retryDelays: [], uploadWorker: true });
  const bytes = pattern(10 * 1024);
  expect(await small.upload(localFile(bytes), context().ctx)).toEqual({ uploadURL: `${server.base}/files/1` });
  expect(sha256(server.uploads.get('/files/1')?.bytes ?? Buffer.alloc(0))).toBe(sha256(bytes));
});
