/**
 * The engine (`Ferry`) uploading: the queue, pause, resume, retry, cancel and errors, and what
 * going offline and online does.
 */
import { describe, expect, test, vi } from 'vitest';
import { blob, ferry, make, network, setOnline, sizesRead, uploader, useEngine } from './test/engine.ts';
import { UploaderError } from './uploader.ts';

useEngine();

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
    setOnline(false);
    await vi.advanceTimersByTimeAsync(3000);
    expect(first.ctx.reason()).toBe('offline');
    expect(ferry.getState().isOffline).toBe(true);
    expect(ferry.getFile(id)?.state).toBe('paused');
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['No Internet connection']);
    await vi.advanceTimersByTimeAsync(60_000); // the message stays while offline
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['No Internet connection']);
    setOnline(true);
    network.dispatchEvent(new Event('online'));
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
