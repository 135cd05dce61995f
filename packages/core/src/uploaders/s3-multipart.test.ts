import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { defaultLocale, translate } from '../locale.ts';
import type { FilePatch } from '../reducer.ts';
import type { FerryFile } from '../types.ts';
import type { AbortReason, UploadContext } from '../uploader.ts';
import { defaultChunkSize, MIN_PART_SIZE, planParts, S3MultipartUploader } from './s3-multipart.ts';

const MiB = 1024 * 1024;

describe('part plan', () => {
  test('chunk size is the larger of size/10000 and 5 MiB', () => {
    expect(defaultChunkSize(0)).toBe(MIN_PART_SIZE);
    expect(defaultChunkSize(1024 * MiB)).toBe(5 * MiB);
    expect(defaultChunkSize(100_000 * MiB)).toBe(Math.ceil((100_000 * MiB) / 10_000));
  });

  test('parts cover the file exactly, at most 10000 of them', () => {
    const plan = planParts(12 * MiB, 5 * MiB);
    expect(plan).toEqual([
      { PartNumber: 1, start: 0, end: 5 * MiB },
      { PartNumber: 2, start: 5 * MiB, end: 10 * MiB },
      { PartNumber: 3, start: 10 * MiB, end: 12 * MiB },
    ]);
    expect(planParts(0, 5 * MiB)).toEqual([{ PartNumber: 1, start: 0, end: 0 }]);
    const huge = planParts(60_000 * MiB, 1); // a too-small chunk is raised to respect the cap
    expect(huge.length).toBe(10_000);
    expect(huge.at(-1)?.end).toBe(60_000 * MiB);
  });
});

/** An in-memory companion + bucket behind mocked fetch and XMLHttpRequest. */
class FakeS3 {
  calls: string[] = [];
  stored = new Map<number, { etag: string; size: number; body: Blob }>();
  inFlight = 0;
  maxInFlight = 0;
  exposeEtag = true;
  partStatus: (n: number, attempt: number) => number = () => 200;
  attempts = new Map<number, number>();
  /** Parts whose PUT stays pending until released. */
  hold: ((n: number) => boolean) | undefined;
  held: (() => void)[] = [];
  aborted = false;

  fetch = vi.fn(async (input: string, init: RequestInit = {}) => {
    const url = new URL(input, 'http://companion');
    const method = init.method ?? 'GET';
    this.calls.push(`${method} ${url.pathname}`);
    const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });
    if (method === 'POST' && url.pathname === '/s3/multipart') return json(200, { uploadId: 'up1', key: 'k/1-a.bin' });
    if (url.pathname.endsWith('/batch')) {
      const numbers = (url.searchParams.get('partNumbers') ?? '').split(',');
      return json(200, { presignedUrls: Object.fromEntries(numbers.map((n) => [n, `http://bucket/part?n=${n}`])) });
    }
    if (url.pathname.endsWith('/complete')) {
      const parts = JSON.parse(String(init.body)).parts as { PartNumber: number }[];
      this.calls.push(`parts ${parts.map((p) => p.PartNumber).join(',')}`);
      return json(200, { location: 'http://bucket/k/1-a.bin' });
    }
    if (method === 'DELETE') {
      this.aborted = true;
      return json(200, {});
    }
    if (method === 'GET' && url.pathname === '/s3/multipart/up1') {
      return json(
        200,
        [...this.stored].map(([PartNumber, p]) => ({ PartNumber, Size: p.size, ETag: p.etag })),
      );
    }
    return json(404, { message: 'no such route' });
  });

  install() {
    const fake = this;
    vi.stubGlobal('fetch', this.fetch);
    vi.stubGlobal(
      'XMLHttpRequest',
      class {
        upload: { onprogress?: (e: { loaded: number }) => void } = {};
        onload?: () => void;
        onerror?: () => void;
        onabort?: () => void;
        status = 0;
        responseText = '';
        #url = '';
        #etag: string | null = null;
        #done = false;
        open(_method: string, url: string) {
          this.#url = url;
        }
        setRequestHeader() {}
        getResponseHeader(name: string) {
          return name === 'ETag' ? this.#etag : null;
        }
        abort() {
          if (this.#done) return;
          this.#done = true;
          fake.inFlight -= 1;
          this.onabort?.();
        }
        send(body: Blob) {
          const n = Number(new URL(this.#url).searchParams.get('n'));
          fake.inFlight += 1;
          fake.maxInFlight = Math.max(fake.maxInFlight, fake.inFlight);
          const finish = () => {
            if (this.#done) return;
            this.#done = true;
            fake.inFlight -= 1;
            const attempt = (fake.attempts.get(n) ?? 0) + 1;
            fake.attempts.set(n, attempt);
            this.status = fake.partStatus(n, attempt);
            if (this.status === 200) {
              const etag = `"etag-${n}"`;
              fake.stored.set(n, { etag, size: body.size, body });
              if (fake.exposeEtag) this.#etag = etag;
            } else {
              this.responseText = '<Error><Code>AccessDenied</Code><Message>Denied</Message></Error>';
            }
            this.upload.onprogress?.({ loaded: body.size });
            this.onload?.();
          };
          if (fake.hold?.(n)) fake.held.push(finish);
          else queueMicrotask(finish);
        }
      },
    );
  }
}

function file(size: number, patch: Partial<FerryFile> = {}): FerryFile {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 4096) bytes[i] = (i / 4096) % 251;
  return {
    id: 'f1',
    source: 'local',
    name: 'a.bin',
    type: 'application/octet-stream',
    data: new Blob([bytes]),
    size,
    meta: { name: 'a.bin' },
    progress: { bytesUploaded: 0, bytesTotal: size, percentage: 0, uploadStarted: null, uploadComplete: false },
    state: 'uploading',
    error: null,
    isPaused: false,
    isRemote: false,
    ...patch,
  } as FerryFile;
}

function context() {
  const controller = new AbortController();
  let reason: AbortReason | undefined;
  const patches: FilePatch[] = [];
  const progress: number[] = [];
  const ctx: UploadContext = {
    signal: controller.signal,
    onProgress: (sent) => progress.push(sent),
    patchFile: (p) => patches.push(p),
    reason: () => reason,
    isOnline: () => true,
    i18n: (key, vars) => translate(defaultLocale, key as keyof typeof defaultLocale, vars),
  };
  return {
    ctx,
    patches,
    progress,
    abort(r: AbortReason) {
      reason = r;
      controller.abort();
    },
  };
}

let s3: FakeS3;
beforeEach(() => {
  s3 = new FakeS3();
  s3.install();
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const uploader = (options: { limit?: number; retryDelays?: number[] } = {}) =>
  new S3MultipartUploader({ companionUrl: 'http://companion', retryDelays: [], ...options });

test('create, sign, put every part, complete: bytes and bookkeeping', async () => {
  const f = file(12 * MiB);
  const c = context();
  const result = await uploader().upload(f, c.ctx);
  expect(result.uploadURL).toBe('http://bucket/k/1-a.bin');
  expect(s3.calls[0]).toBe('POST /s3/multipart');
  expect(s3.calls).toContain('parts 1,2,3');
  expect([...s3.stored.keys()].sort()).toEqual([1, 2, 3]);
  const stored = Buffer.from(await new Blob([1, 2, 3].map((n) => s3.stored.get(n)?.body as Blob)).arrayBuffer());
  expect(stored.equals(Buffer.from(await (f.data as Blob).arrayBuffer()))).toBe(true);
  expect(c.patches[0]).toEqual({ s3Multipart: { uploadId: 'up1', key: 'k/1-a.bin', parts: [] } });
  expect(c.patches.at(-1)?.s3Multipart?.parts.map((p) => p.PartNumber)).toEqual([1, 2, 3]);
  expect(c.progress.at(-1)).toBe(12 * MiB);
});

test('at most `limit` parts are in flight (5 by default)', async () => {
  await uploader().upload(file(40 * MiB), context().ctx);
  expect(s3.maxInFlight).toBe(5);
  s3.maxInFlight = 0;
  s3.stored.clear();
  await uploader({ limit: 2 }).upload(file(40 * MiB), context().ctx);
  expect(s3.maxInFlight).toBe(2);
});

test('an unreadable ETag fails with the CORS message and is not retried', async () => {
  s3.exposeEtag = false;
  await expect(uploader({ retryDelays: [0, 0] }).upload(file(6 * MiB), context().ctx)).rejects.toMatchObject({
    message: defaultLocale.etagUnreadable,
    retryable: false,
  });
  expect(s3.attempts.get(1)).toBe(1);
});

test('a refused part is "Non 2xx"; 4xx is not retried, 5xx is', async () => {
  vi.useFakeTimers();
  s3.partStatus = (n) => (n === 2 ? 403 : 200);
  const refused = uploader({ retryDelays: [0, 1000] }).upload(file(12 * MiB), context().ctx);
  await expect(refused).rejects.toMatchObject({ message: 'Non 2xx', status: 403, details: 'Denied' });
  expect(s3.attempts.get(2)).toBe(1);

  s3.attempts.clear();
  s3.partStatus = (n, attempt) => (n === 2 && attempt < 3 ? 503 : 200);
  const flaky = uploader({ retryDelays: [0, 1000] }).upload(file(12 * MiB), context().ctx);
  await vi.advanceTimersByTimeAsync(1000);
  await expect(flaky).resolves.toMatchObject({ uploadURL: 'http://bucket/k/1-a.bin' });
  expect(s3.attempts.get(2)).toBe(3);
});

test('pause stops the parts; resume lists the stored parts and sends only the rest', async () => {
  const f = file(25 * MiB);
  s3.hold = (n) => n >= 3;
  const first = context();
  const running = uploader({ limit: 2 }).upload(f, first.ctx);
  await vi.waitFor(() => expect(s3.stored.size).toBe(2));
  await vi.waitFor(() => expect(s3.held.length).toBe(2));
  first.abort('pause');
  await expect(running).rejects.toMatchObject({ message: 'aborted' });
  expect(s3.aborted).toBe(false);
  expect(s3.inFlight).toBe(0);

  s3.hold = undefined;
  const last = first.patches.at(-1)?.s3Multipart;
  expect(last?.parts.map((p) => p.PartNumber)).toEqual([1, 2]);
  s3.attempts.clear();
  s3.calls = [];
  const second = context();
  const result = await uploader({ limit: 2 }).upload({ ...f, s3Multipart: last }, second.ctx);
  expect(result.uploadURL).toBe('http://bucket/k/1-a.bin');
  expect(s3.calls[0]).toBe('GET /s3/multipart/up1');
  expect(s3.calls).not.toContain('POST /s3/multipart');
  expect([...s3.attempts.keys()].sort()).toEqual([3, 4, 5]);
  expect(s3.calls).toContain('parts 1,2,3,4,5');
  expect(second.progress[0]).toBe(10 * MiB);
});

test('cancel aborts the multipart upload on the store', async () => {
  s3.hold = () => true;
  const c = context();
  const running = uploader().upload(file(12 * MiB), c.ctx);
  await vi.waitFor(() => expect(s3.held.length).toBe(3));
  c.abort('cancel');
  await expect(running).rejects.toMatchObject({ message: 'aborted' });
  await vi.waitFor(() => expect(s3.aborted).toBe(true));
});

test('companion failures are prefixed "Failed because:"; bad answers are clear errors', async () => {
  s3.fetch.mockImplementationOnce(async () => new Response(JSON.stringify({ message: 'no bucket' }), { status: 400 }));
  await expect(uploader().upload(file(MiB), context().ctx)).rejects.toMatchObject({
    message: 'Failed because: no bucket',
    status: 400,
  });
  s3.fetch.mockImplementationOnce(async () => new Response(JSON.stringify({ key: 'k' }), { status: 200 }));
  await expect(uploader().upload(file(MiB), context().ctx)).rejects.toThrow(
    /S3 multipart creation must return an object with string `uploadId` and `key`/,
  );
});
