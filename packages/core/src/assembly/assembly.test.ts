/**
 * The `assembly` option end to end inside the engine, against a scripted service (a fake fetch
 * answering the Assembly API) and a hand-driven uploader standing in for tus: the requests in
 * order, the states and messages a file goes through, results on the record, errors, cancel.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import { ManualUploader } from '../test/manual-uploader.ts';
import type { AssemblyStatus } from './status.ts';

const SERVICE = 'http://127.0.0.1:4000';
const ASSEMBLY = `${SERVICE}/assemblies/abc`;
const TUS = `${SERVICE}/resumable/files/`;

interface Seen {
  method: string;
  url: string;
  form?: Record<string, string>;
}

/** A fake service: records every request, answers the create with `created`, polls from `polls`. */
function service(polls: (AssemblyStatus | number)[]) {
  const seen: Seen[] = [];
  const created: AssemblyStatus = {
    ok: 'ASSEMBLY_UPLOADING',
    assembly_id: 'abc',
    assembly_url: ASSEMBLY,
    assembly_ssl_url: ASSEMBLY,
    tus_url: TUS,
    uploads: [],
    results: {},
  };
  const fetch = vi.fn(async (url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const form =
      init?.body instanceof FormData ? Object.fromEntries([...init.body].map(([k, v]) => [k, String(v)])) : undefined;
    seen.push({ method, url, ...(form ? { form } : {}) });
    if (method === 'POST') return Response.json(created);
    if (method === 'DELETE') return Response.json({ ...created, ok: 'ASSEMBLY_CANCELED' });
    const next = polls.length > 1 ? polls.shift() : polls[0];
    if (typeof next === 'number') return new Response('nope', { status: next });
    return Response.json(next ?? created);
  });
  return { seen, fetch };
}

const upload = (name: string, id: string) => ({ id, name, size: 3, tus_upload_url: `${TUS}${id}` });
const thumb = (original: string) => ({
  id: `t-${original}`,
  original_id: original,
  name: 'thumb.jpg',
  ssl_url: `${SERVICE}/results/t-${original}.jpg`,
  mime: 'image/jpeg',
  meta: { width: 100, height: 75 },
});

let ferry: Ferry;
let tus: ManualUploader;
const tusUrls: string[] = [];

function make(polls: (AssemblyStatus | number)[], extra: { timeout?: number } = {}) {
  const svc = service(polls);
  tus = new ManualUploader();
  tusUrls.length = 0;
  const params = vi.fn(async () => ({ params: '{"auth":{"key":"k"}}', signature: 'sha384:ff' }));
  ferry = new Ferry({
    online: { isOnline: () => true, target: new EventTarget() },
    assembly: {
      params,
      service: SERVICE,
      fetch: svc.fetch,
      pollDelays: [1000],
      ...extra,
      uploaderFor: (url) => {
        tusUrls.push(url);
        return tus;
      },
    },
  });
  return { ...svc, params };
}

/** Lets promises and the engine's microtasks run (fake timers do not advance on their own). */
const flush = () => vi.advanceTimersByTimeAsync(0);

/** The tus upload settles with the URL the service records for the upload. */
function uploaded(index: number, id: string) {
  const call = tus.calls[index];
  if (!call) throw new Error(`no upload ${index}`);
  call.ctx.onProgress(3, 3);
  call.resolve({ uploadURL: `${TUS}${id}` });
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  ferry?.destroy();
  vi.useRealTimers();
});

describe('assembly', () => {
  test('one assembly per batch, tus into it with the metadata keys, processing, then results on the file', async () => {
    const executing = {
      ok: 'ASSEMBLY_EXECUTING',
      progress_combined: 40,
      uploads: [upload('a.jpg', 'u1')],
      results: {},
    };
    const done = {
      ok: 'ASSEMBLY_COMPLETED',
      assembly_ssl_url: ASSEMBLY,
      uploads: [upload('a.jpg', 'u1'), upload('b.jpg', 'u2')],
      results: { thumb: [thumb('u1'), thumb('u2')] },
    };
    const { seen, params } = make([executing, done]);
    const [a, b] = ferry.addFiles([
      { name: 'a.jpg', data: new Blob(['abc']) },
      { name: 'b.jpg', data: new Blob(['xyz']) },
    ]) as [string, string];
    const summary = ferry.upload();
    await flush();
    expect(params).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([
      {
        method: 'POST',
        url: `${SERVICE}/assemblies`,
        form: { params: '{"auth":{"key":"k"}}', signature: 'sha384:ff', num_expected_upload_files: '2' },
      },
    ]);
    expect(tusUrls).toEqual([TUS]);
    expect(tus.calls.map((c) => c.file.meta)).toEqual([
      { name: 'a.jpg', type: '', assembly_url: ASSEMBLY, fieldname: 'file', filename: 'a.jpg' },
      { name: 'b.jpg', type: '', assembly_url: ASSEMBLY, fieldname: 'file', filename: 'b.jpg' },
    ]);
    // The file's own meta is not touched: the keys go only with the upload.
    expect(ferry.getFile(a)?.meta).toEqual({ name: 'a.jpg', type: '' });

    uploaded(0, 'u1');
    await flush();
    expect(ferry.getFile(a)?.state).toBe('postprocessing');
    expect(ferry.getFile(a)?.progress.postprocess).toEqual({
      mode: 'determinate',
      message: 'Processing',
      value: 0.4,
    });
    expect(seen.slice(1)).toEqual([{ method: 'GET', url: ASSEMBLY }]);

    uploaded(1, 'u2');
    await vi.advanceTimersByTimeAsync(1000);
    const result = await summary;
    expect(result.successful.map((f) => f.id)).toEqual([a, b]);
    expect(ferry.getFile(a)?.state).toBe('complete');
    expect(ferry.getFile(a)?.results).toEqual({ thumb: [thumb('u1')] });
    expect(ferry.getFile(b)?.results).toEqual({ thumb: [thumb('u2')] });
    // One poll shared by both files, then no more.
    expect(seen.map((s) => s.method)).toEqual(['POST', 'GET', 'GET']);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen).toHaveLength(3);
  });

  test('a failed assembly is an error on the file with the service message', async () => {
    make([{ error: 'IMAGE_RESIZE_ERROR', message: 'The image could not be decoded', assembly_ssl_url: ASSEMBLY }]);
    const [a] = ferry.addFiles([{ name: 'a.jpg', data: new Blob(['abc']) }]) as [string];
    const summary = ferry.upload();
    await flush();
    uploaded(0, 'u1');
    const result = await summary;
    expect(result.failed.map((f) => f.id)).toEqual([a]);
    expect(ferry.getFile(a)?.state).toBe('error');
    expect(ferry.getFile(a)?.error?.message).toBe('The image could not be decoded');
    expect(ferry.getFile(a)?.results).toBeUndefined();
  });

  test('a retried file goes into a new assembly, not its old tus upload', async () => {
    const failed = { error: 'ASSEMBLY_CRASHED', message: 'The assembly crashed', assembly_ssl_url: ASSEMBLY };
    const done = { ok: 'ASSEMBLY_COMPLETED', uploads: [upload('a.jpg', 'u2')], results: { thumb: [thumb('u2')] } };
    const { seen } = make([failed, done]);
    const [a] = ferry.addFiles([{ name: 'a.jpg', data: new Blob(['abc']) }]) as [string];
    const first = ferry.upload();
    await flush();
    tus.last().ctx.patchFile({ tus: { uploadUrl: `${TUS}u1` } });
    uploaded(0, 'u1');
    await first;
    expect(ferry.getFile(a)?.error?.message).toBe('The assembly crashed');
    const retry = ferry.retryUpload(a);
    await flush();
    expect(tus.calls[1]?.file.tus).toBeUndefined();
    uploaded(1, 'u2');
    expect((await retry).successful.map((f) => f.id)).toEqual([a]);
    expect(ferry.getFile(a)?.results).toEqual({ thumb: [thumb('u2')] });
    expect(seen.map((r) => `${r.method} ${r.form?.num_expected_upload_files ?? ''}`)).toEqual([
      'POST 1',
      'GET ',
      'POST 1',
      'GET ',
    ]);
  });

  test('a refused create fails the batch with the service message and uploads nothing', async () => {
    const { fetch } = make([]);
    fetch.mockImplementationOnce(async () =>
      Response.json({ error: 'INVALID_SIGNATURE', message: 'The signature does not match' }, { status: 401 }),
    );
    const [a] = ferry.addFiles([{ name: 'a.jpg', data: new Blob(['abc']) }]) as [string];
    await ferry.upload();
    expect(ferry.getFile(a)?.state).toBe('error');
    expect(ferry.getFile(a)?.error?.message).toBe('The signature does not match');
    expect(tus.calls).toHaveLength(0);
  });

  test('cancel stops polling and cancels the assembly', async () => {
    const { seen } = make([{ ok: 'ASSEMBLY_EXECUTING', uploads: [], results: {} }]);
    const [a] = ferry.addFiles([{ name: 'a.jpg', data: new Blob(['abc']) }]) as [string];
    const summary = ferry.upload();
    await flush();
    uploaded(0, 'u1');
    await vi.advanceTimersByTimeAsync(2000);
    expect(ferry.getFile(a)?.progress.postprocess).toEqual({ mode: 'indeterminate', message: 'Processing' });
    const polls = seen.filter((s) => s.method === 'GET').length;
    expect(polls).toBe(3);
    ferry.cancelAll();
    await summary;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(seen.filter((s) => s.method === 'GET')).toHaveLength(polls);
    expect(seen.at(-1)).toEqual({ method: 'DELETE', url: ASSEMBLY });
  });

  test('polling is bounded: a service that never finishes fails the file at the deadline', async () => {
    make([{ ok: 'ASSEMBLY_EXECUTING', uploads: [], results: {} }], { timeout: 5000 });
    const [a] = ferry.addFiles([{ name: 'a.jpg', data: new Blob(['abc']) }]) as [string];
    const summary = ferry.upload();
    await flush();
    uploaded(0, 'u1');
    await vi.advanceTimersByTimeAsync(6000);
    await summary;
    expect(ferry.getFile(a)?.error?.message).toBe('Processing took too long and was given up');
  });

  test('a poll that keeps failing gives up after three tries with the status', async () => {
    make([503]);
    const [a] = ferry.addFiles([{ name: 'a.jpg', data: new Blob(['abc']) }]) as [string];
    const summary = ferry.upload();
    await flush();
    uploaded(0, 'u1');
    await vi.advanceTimersByTimeAsync(3000);
    await summary;
    expect(ferry.getFile(a)?.error?.message).toBe('The processing service answered 503');
  });

  test('with a limit of one, a file in processing does not hold the slot its batch-mate needs', async () => {
    const done = {
      ok: 'ASSEMBLY_COMPLETED',
      uploads: [upload('a.jpg', 'u1'), upload('b.jpg', 'u2')],
      results: {},
    };
    const svc = service([{ ok: 'ASSEMBLY_UPLOADING', uploads: [], results: {} }, done]);
    tus = new ManualUploader();
    ferry = new Ferry({
      limit: 1,
      online: { isOnline: () => true, target: new EventTarget() },
      assembly: {
        params: () => ({ params: '{}' }),
        service: SERVICE,
        fetch: svc.fetch,
        pollDelays: [1000],
        uploaderFor: () => tus,
      },
    });
    ferry.addFiles([
      { name: 'a.jpg', data: new Blob(['abc']) },
      { name: 'b.jpg', data: new Blob(['xyz']) },
    ]);
    const summary = ferry.upload();
    await flush();
    uploaded(0, 'u1');
    await flush();
    expect(tus.calls).toHaveLength(2);
    uploaded(1, 'u2');
    await vi.advanceTimersByTimeAsync(1000);
    const result = await summary;
    expect(result.failed.map((f) => f.error?.message)).toEqual([]);
    expect(result.successful).toHaveLength(2);
  });
});
