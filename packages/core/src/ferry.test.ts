/**
 * The engine (`Ferry`): adding files (large batches, restrictions, metadata), the informer and
 * locales. Uploading: `ferry-upload.test.ts`; bundles: `ferry-bundle.test.ts`.
 */
import { describe, expect, test, vi } from 'vitest';
import { blob, ferry, make, useEngine } from './test/engine.ts';

useEngine();

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
