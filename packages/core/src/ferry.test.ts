import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Ferry, type FerryOptions } from './ferry.ts';
import { ManualUploader } from './test/manual-uploader.ts';
import type { FerryFile } from './types.ts';
import { type BundleContext, type Uploader, UploaderError, type UploadResult } from './uploader.ts';

const blob = (size: number) => new Blob([new Uint8Array(size)]);

/** Resolves once no file has its size pending (a large batch's sizes are read after adding). */
function sizesRead(f: Ferry): Promise<void> {
  return new Promise((ok) => {
    if (f.getState().sizesPending === 0) return ok();
    const off = f.subscribe((s) => {
      if (s.sizesPending > 0) return;
      off();
      ok();
    });
  });
}

let online = true;
const target = new EventTarget();
let ferry: Ferry;
let uploader: ManualUploader;

function make(options: Partial<FerryOptions> = {}): Ferry {
  uploader = new ManualUploader();
  ferry = new Ferry({ uploader, online: { isOnline: () => online, target }, ...options });
  return ferry;
}

beforeEach(() => {
  vi.useFakeTimers();
  online = true;
});
afterEach(() => {
  ferry?.destroy();
  vi.useRealTimers();
});

describe('adding files', () => {
  test('10,000 files are one state change, in order, with one files-added', () => {
    make();
    let changes = 0;
    ferry.subscribe(() => {
      changes += 1;
    });
    const added = vi.fn();
    const each = vi.fn();
    ferry.on('files-added', added);
    ferry.on('file-added', each);
    const ids = ferry.addFiles(Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}.txt`, data: blob(1) })));
    expect(ids).toHaveLength(10_000);
    expect(changes).toBe(1);
    expect(added).toHaveBeenCalledTimes(1);
    expect(each).toHaveBeenCalledTimes(10_000);
    const state = ferry.getState();
    expect(state.fileIds).toEqual(ids);
    expect(state.files[ids[9999] ?? '']?.name).toBe('f9999.txt');
    expect(new Set(ids).size).toBe(10_000);
  });

  test('a flood of rejections is one toast; rejected files never enter the store (sizes read while adding)', () => {
    // 501 files read their sizes while adding only below the eager limit; sizing.test.ts has the lazy path.
    make({ restrictions: { maxFileSize: 10 }, sizing: { eagerUpTo: 1000 } });
    const failed = vi.fn();
    ferry.on('restriction-failed', failed);
    const ids = ferry.addFiles([
      { name: 'ok.txt', data: blob(5) },
      ...Array.from({ length: 500 }, (_, i) => ({ name: `big${i}.bin`, data: blob(11) })),
    ]);
    expect(ids).toHaveLength(1);
    expect(ferry.getState().fileIds).toEqual(ids);
    expect(failed).toHaveBeenCalledTimes(500);
    expect(failed.mock.calls[0]?.[1]).toEqual({
      code: 'max-file-size',
      message: 'big0.bin exceeds maximum allowed size of 10 B',
      fileName: 'big0.bin',
    });
    expect(ferry.getState().info.map((i) => [i.type, i.message])).toEqual([
      ['error', 'big0.bin exceeds maximum allowed size of 10 B (and 499 more)'],
    ]);
    vi.advanceTimersByTime(5000);
    expect(ferry.getState().info).toEqual([]);
  });

  test('refusals in batches close together (a folder dropped in parts) add up in one toast', () => {
    make({ restrictions: { maxFileSize: 10 }, sizing: { eagerUpTo: 1000 } });
    const part = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `big${from + i}.bin`, data: blob(11) }));
    ferry.addFiles(part(0, 3));
    const first = ferry.getState().info[0]?.id;
    vi.advanceTimersByTime(4000);
    ferry.addFiles([{ name: 'ok.txt', data: blob(5) }, ...part(3, 4)]);
    // The same toast, in its place, counting both parts; its 5 s start again.
    expect(ferry.getState().info.map((i) => [i.id, i.message])).toEqual([
      [first, 'big0.bin exceeds maximum allowed size of 10 B (and 6 more)'],
    ]);
    vi.advanceTimersByTime(4000);
    expect(ferry.getState().info).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(ferry.getState().info).toEqual([]);
    // Once it is gone, the next refusal starts its own count.
    ferry.addFiles(part(7, 1));
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['big7.bin exceeds maximum allowed size of 10 B']);
    expect(ferry.getState().info[0]?.id).not.toBe(first);
  });

  test('a refusal toast dismissed by hand is not brought back by the next refusal', () => {
    make({ restrictions: { maxFileSize: 10 }, sizing: { eagerUpTo: 1000 } });
    ferry.addFiles([
      { name: 'a.bin', data: blob(11) },
      { name: 'b.bin', data: blob(11) },
    ]);
    ferry.hideInfo(ferry.getState().info[0]?.id);
    ferry.addFiles([{ name: 'c.bin', data: blob(11) }]);
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['c.bin exceeds maximum allowed size of 10 B']);
  });

  test('duplicates are refused, even within one call; removing frees the slot', () => {
    make();
    const file = new File(['abc'], 'a.txt', { type: 'text/plain', lastModified: 1 });
    const [id] = ferry.addFiles([{ data: file }, { data: file }]);
    expect(ferry.getState().fileIds).toHaveLength(1);
    expect(ferry.addFile({ data: file })).toBeNull();
    ferry.removeFile(id ?? '');
    expect(ferry.addFile({ data: file })).not.toBeNull();
  });

  test('maxNumberOfFiles and onBeforeFileAdded', () => {
    make({
      restrictions: { maxNumberOfFiles: 2 },
      onBeforeFileAdded: (f) =>
        f.name === 'no.txt' ? false : f.name === 'rename.txt' ? { name: 'renamed.txt' } : true,
    });
    const ids = ferry.addFiles(['a', 'no.txt', 'rename.txt', 'c'].map((name) => ({ name, data: blob(1) })));
    expect(ids.map((id) => ferry.getFile(id)?.name)).toEqual(['a', 'renamed.txt']);
    expect(ferry.getState().info[0]?.message).toBe('You can only upload 2 files');
  });

  test('remote files keep their remote info and global meta is merged', () => {
    make({ meta: { project: 'p1' } });
    const id = ferry.addFile({
      name: 'cloud.pdf',
      type: 'application/pdf',
      size: 123,
      isRemote: true,
      remote: { body: { fileId: 'x' } },
      relativePath: 'dir/cloud.pdf',
    });
    const f = ferry.getFile(id ?? '');
    expect(f).toMatchObject({ isRemote: true, data: null, size: 123, relativePath: 'dir/cloud.pdf', state: 'waiting' });
    expect(f?.meta).toEqual({
      project: 'p1',
      name: 'cloud.pdf',
      type: 'application/pdf',
      relativePath: 'dir/cloud.pdf',
    });
    ferry.setMeta({ project: 'p2', lang: 'fr' });
    expect(ferry.getFile(id ?? '')?.meta).toMatchObject({ project: 'p2', lang: 'fr', name: 'cloud.pdf' });
    expect(ferry.getState().meta).toEqual({ project: 'p2', lang: 'fr' });
    ferry.setFileMeta(id ?? '', { caption: 'hi' });
    expect(ferry.getFile(id ?? '')?.meta.caption).toBe('hi');
  });
});

describe('uploading', () => {
  test('events and states from waiting to complete, progress throttled to 500 ms', async () => {
    make();
    const events: string[] = [];
    for (const e of ['upload', 'upload-start', 'upload-progress', 'upload-success', 'complete'] as const) {
      ferry.on(e, () => events.push(e));
    }
    const [id = ''] = ferry.addFiles([{ name: 'a', data: blob(1000) }]);
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    expect(ferry.getFile(id)?.state).toBe('uploading');
    let changes = 0;
    const off = ferry.subscribe(() => {
      changes += 1;
    });
    const { ctx, resolve } = uploader.last();
    for (let i = 1; i <= 100; i += 1) ctx.onProgress(i * 5, 1000);
    expect(changes).toBe(1); // the first report goes out at once
    expect(ferry.getFile(id)?.progress.bytesUploaded).toBe(5);
    vi.advanceTimersByTime(500);
    expect(changes).toBe(2);
    expect(ferry.getFile(id)?.progress).toMatchObject({ bytesUploaded: 500, percentage: 50 });
    expect(ferry.getState().totalProgress).toBe(50);
    off();
    resolve({ uploadURL: 'http://x/files/1' });
    const result = await done;
    expect(result.successful.map((f) => f.id)).toEqual([id]);
    expect(ferry.getFile(id)).toMatchObject({ state: 'complete', uploadURL: 'http://x/files/1' });
    expect(ferry.getFile(id)?.progress).toMatchObject({ percentage: 100, uploadComplete: true });
    expect(events).toEqual([
      'upload',
      'upload-start',
      'upload-progress',
      'upload-progress',
      'upload-success',
      'complete',
    ]);
  });

  test('errors keep the server status and message; many failures, one toast; retry runs again', async () => {
    make();
    const ids = ferry.addFiles(Array.from({ length: 3 }, (_, i) => ({ name: `f${i}`, data: blob(1) })));
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    for (const call of uploader.calls) call.reject(new UploaderError('Internal', { status: 500, details: 'boom' }));
    const result = await done;
    expect(result.failed).toHaveLength(3);
    expect(ferry.getFile(ids[0] ?? '')?.error).toEqual({
      message: 'Internal',
      status: 500,
      retryable: true,
      details: 'boom',
    });
    expect(ferry.getState().info.map((i) => [i.message, i.details])).toEqual([['Upload error', 'Internal']]);

    const retried = vi.fn();
    ferry.on('upload-retry', retried);
    const again = ferry.retryUpload(ids[0] ?? '');
    await vi.advanceTimersByTimeAsync(0);
    expect(retried).toHaveBeenCalledTimes(1);
    expect(ferry.getFile(ids[0] ?? '')?.state).toBe('uploading');
    uploader.last().resolve({});
    expect((await again).successful).toHaveLength(1);

    const all = ferry.retryAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(uploader.calls).toHaveLength(6);
    for (const call of uploader.calls.slice(4)) call.resolve({});
    expect((await all).successful).toHaveLength(2);
  });

  test('a stall of 30 s aborts with the catalogue message and a retryable error', async () => {
    make();
    const [id = ''] = ferry.addFiles([{ name: 'slow', data: blob(100) }]);
    const failed = vi.fn();
    ferry.on('upload-error', failed);
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const { ctx } = uploader.last();
    ctx.onProgress(10, 100);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(ferry.getFile(id)?.state).toBe('uploading');
    await vi.advanceTimersByTimeAsync(1);
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.reason()).toBe('stall');
    await done;
    expect(ferry.getFile(id)?.error).toEqual({ message: 'Upload stalled for 30 seconds, aborting.', retryable: true });
    expect(failed).toHaveBeenCalledTimes(1);
  });

  test('pause aborts with reason pause; resume calls the uploader again with the bookkeeping', async () => {
    make();
    const [id = ''] = ferry.addFiles([{ name: 'a', data: blob(100) }]);
    const pauses: boolean[] = [];
    ferry.on('upload-pause', (_f, paused) => pauses.push(paused));
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const first = uploader.last();
    first.ctx.patchFile({ tus: { uploadUrl: 'http://x/files/abc' } });
    first.ctx.onProgress(40, 100);
    expect(ferry.pauseResume(id)).toBe(true);
    expect(first.ctx.reason()).toBe('pause');
    expect(ferry.getFile(id)).toMatchObject({ state: 'paused', isPaused: true });
    await vi.advanceTimersByTimeAsync(60_000); // no stall while paused
    expect(ferry.getFile(id)?.state).toBe('paused');
    expect(ferry.pauseResume(id)).toBe(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(uploader.calls).toHaveLength(2);
    expect(uploader.last().file.tus).toEqual({ uploadUrl: 'http://x/files/abc' });
    uploader.last().resolve({ uploadURL: 'http://x/files/abc' });
    expect((await done).successful).toHaveLength(1);
    expect(pauses).toEqual([true, false]);
  });

  test('files that start together start in one state change', async () => {
    make();
    ferry.addFiles(Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}`, data: blob(1) })));
    await sizesRead(ferry);
    let changes = 0;
    ferry.subscribe(() => {
      changes += 1;
    });
    void ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    expect(uploader.calls).toHaveLength(1000);
    expect(changes).toBe(1);
    expect(ferry.getFiles().every((f) => f.state === 'uploading')).toBe(true);
  });

  test('the limit is shared across files', async () => {
    make({ limit: 2 });
    ferry.addFiles(Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, data: blob(1) })));
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    expect(uploader.calls).toHaveLength(2);
    expect(ferry.getFiles().map((f) => f.state)).toEqual(['uploading', 'uploading', 'waiting', 'waiting', 'waiting']);
    uploader.calls[0]?.resolve({});
    await vi.advanceTimersByTimeAsync(0);
    expect(uploader.calls).toHaveLength(3);
    for (let i = 1; i < 5; i += 1) {
      uploader.calls[i]?.resolve({});
      await vi.advanceTimersByTimeAsync(0);
    }
    expect((await done).successful).toHaveLength(5);
  });

  test('remove and cancelAll abort with their reason and settle the upload', async () => {
    make();
    const [a = '', b = ''] = ferry.addFiles([
      { name: 'a', data: blob(1) },
      { name: 'b', data: blob(1) },
    ]);
    const removed = vi.fn();
    ferry.on('file-removed', removed);
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const [ca, cb] = uploader.calls;
    ferry.removeFile(a);
    expect(ca?.ctx.reason()).toBe('remove');
    const cancelled = vi.fn();
    ferry.on('cancel-all', cancelled);
    ferry.cancelAll();
    expect(cb?.ctx.reason()).toBe('cancel');
    expect(await done).toEqual({ successful: [], failed: [] });
    expect(ferry.getState().fileIds).toEqual([]);
    expect(removed.mock.calls.map((c) => [c[0].id, c[1]])).toEqual([
      [a, 'removed-by-user'],
      [b, 'cancel-all'],
    ]);
    expect(cancelled).toHaveBeenCalledTimes(1);
  });

  test('minNumberOfFiles is checked at upload', async () => {
    make({ restrictions: { minNumberOfFiles: 2 } });
    ferry.addFile({ name: 'a', data: blob(1) });
    const failed = vi.fn();
    ferry.on('restriction-failed', failed);
    expect(await ferry.upload()).toEqual({ successful: [], failed: [] });
    expect(uploader.calls).toHaveLength(0);
    expect(failed.mock.calls[0]?.[1].code).toBe('min-number-of-files');
    expect(ferry.getState().info[0]?.message).toBe('You have to select at least 2 files');
  });

  test('pre- and postprocessors run in their states', async () => {
    make();
    const [id = ''] = ferry.addFiles([{ name: 'a', data: blob(1) }]);
    const seen: string[] = [];
    ferry.addPreProcessor(async (ids) => {
      seen.push(`pre:${ferry.getFile(ids[0] ?? '')?.state}`);
      const f = ferry.getFile(id);
      if (f) ferry.emit('preprocess-progress', f, { mode: 'indeterminate', message: ferry.i18n('preparingUpload') });
      seen.push(`msg:${ferry.getFile(id)?.progress.preprocess?.message}`);
    });
    ferry.addPostProcessor(async (ids) => {
      seen.push(`post:${ferry.getFile(ids[0] ?? '')?.state}`);
    });
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    uploader.last().resolve({ uploadURL: 'u' });
    await done;
    expect(seen).toEqual(['pre:preprocessing', 'msg:Preparing upload...', 'post:postprocessing']);
    expect(ferry.getFile(id)?.state).toBe('complete');
  });

  test('autoProceed uploads once per batch of adds', async () => {
    make({ autoProceed: true });
    ferry.addFiles([{ name: 'a', data: blob(1) }]);
    ferry.addFiles([{ name: 'b', data: blob(1) }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(uploader.calls.map((c) => c.file.name)).toEqual(['a', 'b']);
  });
});

describe('online handling', () => {
  test('offline pauses active uploads and informs; online resumes them', async () => {
    make();
    const [id = ''] = ferry.addFiles([{ name: 'a', data: blob(100) }]);
    const events: string[] = [];
    ferry.on('is-offline', () => events.push('offline'));
    ferry.on('is-online', () => events.push('online'));
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const first = uploader.last();
    online = false;
    await vi.advanceTimersByTimeAsync(3000);
    expect(first.ctx.reason()).toBe('offline');
    expect(ferry.getState().isOffline).toBe(true);
    expect(ferry.getFile(id)?.state).toBe('paused');
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['No Internet connection']);
    await vi.advanceTimersByTimeAsync(60_000); // the message stays while offline
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['No Internet connection']);
    online = true;
    target.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(0);
    expect(ferry.getState().isOffline).toBe(false);
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['Connected!']);
    expect(uploader.calls).toHaveLength(2);
    expect(ferry.getFile(id)?.state).toBe('uploading');
    expect(uploader.last().ctx.isOnline()).toBe(true);
    uploader.last().resolve({});
    expect((await done).successful).toHaveLength(1);
    expect(events).toEqual(['offline', 'online']);
  });
});

describe('bundle mode', () => {
  interface BundleCall {
    files: FerryFile[];
    ctx: BundleContext;
    resolve: (r: UploadResult[]) => void;
    reject: (e: unknown) => void;
  }
  let calls: BundleCall[];

  /** An engine whose uploader sends bundles the test settles by hand (aborts reject them). */
  function bundled(options: Partial<FerryOptions> = {}): string[] {
    calls = [];
    const bundler: Uploader = {
      upload: () => Promise.reject(new Error('not used')),
      bundles: () => true,
      uploadBundle: (files, ctx) =>
        new Promise((resolve, reject) => {
          calls.push({ files, ctx, resolve, reject });
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        }),
    };
    ferry = new Ferry({ uploader: bundler, online: { isOnline: () => true }, ...options });
    return ferry.addFiles([
      { name: 'a', data: blob(100) },
      { name: 'b', data: blob(300) },
    ]);
  }

  test('all files go in one call, progress spread by size', async () => {
    const ids = bundled();
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.files.map((f) => f.name)).toEqual(['a', 'b']);
    calls[0]?.ctx.onProgress(200, 400);
    expect(ids.map((id) => ferry.getFile(id)?.progress.bytesUploaded)).toEqual([100, 100]);
    expect(ferry.pauseResume(ids[0] ?? '')).toBeUndefined();
    calls[0]?.resolve([{ uploadURL: 'u1' }, { uploadURL: 'u2' }]);
    const result = await done;
    expect(result.successful.map((f) => f.uploadURL)).toEqual(['u1', 'u2']);
  });

  test('progress goes through the throttle: one state change per window for every file', async () => {
    const ids = bundled();
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const progress = vi.fn();
    ferry.on('upload-progress', progress);
    calls[0]?.ctx.onProgress(50, 400);
    calls[0]?.ctx.onProgress(150, 400);
    calls[0]?.ctx.onProgress(250, 400);
    expect(ids.map((id) => ferry.getFile(id)?.progress.bytesUploaded)).toEqual([50, 0]);
    expect(progress).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(500);
    expect(ids.map((id) => ferry.getFile(id)?.progress.bytesUploaded)).toEqual([100, 150]);
    expect(progress).toHaveBeenCalledTimes(4);
    calls[0]?.resolve([{}, {}]);
    expect((await done).successful).toHaveLength(2);
  });

  test('without postprocessors a bundled file goes from uploading to complete, as a single file does', async () => {
    const ids = bundled();
    const states: string[] = [];
    ferry.subscribe(() => states.push(ferry.getFile(ids[0] ?? '')?.state ?? ''));
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    calls[0]?.resolve([{ uploadURL: 'u1' }, { uploadURL: 'u2' }]);
    await done;
    expect([...new Set(states)]).toEqual(['uploading', 'complete']);
  });

  test('postprocessors run once over every file of the bundle, in postprocessing', async () => {
    const ids = bundled();
    const seen: string[][] = [];
    ferry.addPostProcessor((fileIds) => {
      seen.push(fileIds.map((id) => `${ferry.getFile(id)?.name}:${ferry.getFile(id)?.state}`));
    });
    const success = vi.fn();
    ferry.on('upload-success', success);
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    calls[0]?.resolve([{ uploadURL: 'u1' }, { uploadURL: 'u2' }]);
    expect((await done).successful.map((f) => f.uploadURL)).toEqual(['u1', 'u2']);
    expect(seen).toEqual([['a:postprocessing', 'b:postprocessing']]);
    expect(success.mock.calls.map((c) => c[1])).toEqual([{ uploadURL: 'u1' }, { uploadURL: 'u2' }]);
    expect(ids.map((id) => ferry.getFile(id)?.state)).toEqual(['complete', 'complete']);
  });

  test('cancelAll aborts the bundle request with reason cancel and settles the upload', async () => {
    bundled();
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const { ctx } = calls[0] as BundleCall;
    ferry.cancelAll();
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.reason()).toBe('cancel');
    expect(await done).toEqual({ successful: [], failed: [] });
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
  });

  test('removing one file aborts the bundle request and sends the files left in a new one', async () => {
    const [a = '', b = ''] = bundled();
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const { ctx } = calls[0] as BundleCall;
    ferry.removeFile(a);
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.reason()).toBe('remove');
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.files.map((f) => f.id)).toEqual([b]);
    expect(ferry.getFile(b)?.state).toBe('uploading');
    calls[1]?.resolve([{ uploadURL: 'u2' }]);
    const result = await done;
    expect(result.successful.map((f) => f.uploadURL)).toEqual(['u2']);
    expect(ferry.getFile(a)).toBeUndefined();
  });

  test('destroy() aborts the bundle request', async () => {
    bundled();
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const { ctx } = calls[0] as BundleCall;
    ferry.destroy();
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.reason()).toBe('cancel');
    await done;
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
  });

  test('a stalled bundle fails every file with the stall message', async () => {
    const ids = bundled({ stallTimeout: 1000 });
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    const { ctx } = calls[0] as BundleCall;
    await vi.advanceTimersByTimeAsync(1000);
    expect(ctx.reason()).toBe('stall');
    expect((await done).failed).toHaveLength(2);
    expect(ids.map((id) => ferry.getFile(id)?.error?.message)).toEqual([
      'Upload stalled for 1 seconds, aborting.',
      'Upload stalled for 1 seconds, aborting.',
    ]);
  });
});

describe('informer and locale', () => {
  test('info shows for its duration; identical messages are one toast; locale overrides', () => {
    make({ locale: { noInternetConnection: 'Hors ligne' } });
    const visible = vi.fn();
    const hidden = vi.fn();
    ferry.on('info-visible', visible);
    ferry.on('info-hidden', hidden);
    ferry.info('hello', 'info', 1000);
    ferry.info('hello', 'info', 1000);
    ferry.info({ message: 'bad', details: 'why' }, 'error', 0);
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['hello', 'bad']);
    expect(visible).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(1000);
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['bad']);
    expect(hidden).toHaveBeenCalledTimes(1);
    ferry.hideInfo();
    expect(ferry.getState().info).toEqual([]);
    expect(ferry.i18n('noInternetConnection')).toBe('Hors ligne');
    expect(ferry.i18n('uploadStalled', { seconds: 30 })).toBe('Upload stalled for 30 seconds, aborting.');
    expect(ferry.i18n('failedToFetch')).toBe('Companion failed to fetch this URL, please make sure it’s correct');
  });
});
