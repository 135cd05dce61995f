/**
 * The engine (`Ferry`) in bundle mode: one uploader call for all files, progress spread by size,
 * aborts and failures of the whole bundle.
 */
import { describe, expect, test, vi } from 'vitest';
import type { FerryOptions } from './ferry.ts';
import { blob, ferry, make, useEngine } from './test/engine.ts';
import type { FerryFile } from './types.ts';
import type { BundleContext, Uploader, UploadResult } from './uploader.ts';

useEngine();

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
    make({ uploader: bundler, online: { isOnline: () => true }, ...options });
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
