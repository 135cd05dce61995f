import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Ferry, type FerryOptions } from './ferry.ts';
import { DEFAULT_COMMIT_MS } from './sizing.ts';
import type { FerryFile } from './types.ts';
import type { UploadResult } from './uploader.ts';

/** Cost of one size lookup of a picked file in Chromium (measured in issue 15). */
const LOOKUP_MS = 0.35;

/** A clock that only moves when a fake file's size is looked up, and counters of those lookups. */
const clock = { now: 0 };
const reads = { size: 0, lastModified: 0 };

/**
 * A picked file as Chromium gives it: reading `size` or `lastModified` costs a lookup on disk
 * (here: moves the clock), so the tests see every synchronous read.
 */
function pickedFile(name: string, size: number, lastModified = 1): Blob {
  return {
    name,
    type: 'text/plain',
    get size() {
      reads.size += 1;
      clock.now += LOOKUP_MS;
      return size;
    },
    get lastModified() {
      reads.lastModified += 1;
      return lastModified;
    },
  } as unknown as Blob;
}

/** The engine's yields, released one by one: each release lets exactly one slice run. */
let yields: (() => void)[] = [];
async function nextSlice(): Promise<boolean> {
  const release = yields.shift();
  if (!release) return false;
  release();
  await vi.advanceTimersByTimeAsync(0);
  return true;
}
async function allSlices(): Promise<number> {
  let n = 0;
  while (await nextSlice()) n += 1;
  return n;
}

let ferry: Ferry;
let uploaded: FerryFile[];

function make(options: Partial<FerryOptions> = {}, sizing: FerryOptions['sizing'] = {}): Ferry {
  uploaded = [];
  ferry = new Ferry({
    uploader: {
      upload: (file): Promise<UploadResult> => {
        uploaded.push(file);
        return Promise.resolve({ uploadURL: `http://x/${file.id}` });
      },
    },
    online: { isOnline: () => true, target: new EventTarget() },
    sizing: {
      now: () => clock.now,
      yieldToMain: () => new Promise<void>((ok) => yields.push(ok)),
      ...sizing,
    },
    ...options,
  });
  return ferry;
}

const picked = (n: number, size: (i: number) => number = () => 1, prefix = 'f') =>
  Array.from({ length: n }, (_, i) => ({ data: pickedFile(`${prefix}${i}.txt`, size(i)), source: 'local' }));

beforeEach(() => {
  vi.useFakeTimers();
  clock.now = 0;
  reads.size = 0;
  reads.lastModified = 0;
  yields = [];
});
afterEach(() => {
  ferry?.destroy();
  vi.useRealTimers();
});

describe('a large batch of picked files', () => {
  test('appears at once with sizes pending: no size or modification time is read while adding', () => {
    make();
    let changes = 0;
    ferry.subscribe(() => {
      changes += 1;
    });
    const ids = ferry.addFiles(picked(10_000));
    expect(ids).toHaveLength(10_000);
    expect(reads).toEqual({ size: 0, lastModified: 0 });
    expect(changes).toBe(1);
    const state = ferry.getState();
    expect(state.sizesPending).toBe(10_000);
    expect(state.files[ids[0] ?? '']).toMatchObject({ size: null, sizePending: true, name: 'f0.txt' });
    expect(state.files[ids[9999] ?? '']?.progress.bytesTotal).toBeNull();
  });

  test('sizes arrive in time slices, one state change per slice, each size read once', async () => {
    make({}, { commitMs: 0 });
    const ids = ferry.addFiles(picked(10_000, (i) => i));
    const pendingAfterEachChange: number[] = [];
    ferry.subscribe((s) => pendingAfterEachChange.push(s.sizesPending));
    const slices = await allSlices();
    // 8 ms slices of 0.35 ms lookups: 23 files a slice (the 23rd lookup crosses 8 ms).
    const perSlice = Math.ceil(8 / LOOKUP_MS);
    expect(slices).toBe(Math.ceil(10_000 / perSlice));
    expect(pendingAfterEachChange).toHaveLength(slices);
    expect(pendingAfterEachChange[0]).toBe(10_000 - perSlice);
    expect(pendingAfterEachChange.at(-1)).toBe(0);
    expect(reads.size).toBe(10_000);
    const state = ferry.getState();
    expect(state.files[ids[1234] ?? '']).toMatchObject({ size: 1234, progress: { bytesTotal: 1234 } });
    expect(state.files[ids[1234] ?? '']).not.toHaveProperty('sizePending');
    // 435 commits of 10,000 files each: 1.4 s alone, over vitest's 5 s default on a loaded machine.
  }, 20_000);

  test('by default, slices commit together at most every 250 ms (each commit costs O(files))', async () => {
    make();
    ferry.addFiles(picked(10_000));
    let changes = 0;
    ferry.subscribe(() => {
      changes += 1;
    });
    const slices = await allSlices();
    // 10,000 lookups of 0.35 ms: 3.5 s of reading, so about 14 commits (the first slice commits at once).
    expect(DEFAULT_COMMIT_MS).toBe(250);
    expect(changes).toBeGreaterThanOrEqual(12);
    expect(changes).toBeLessThanOrEqual(Math.ceil((10_000 * LOOKUP_MS) / DEFAULT_COMMIT_MS) + 1);
    expect(slices).toBeGreaterThan(10 * changes);
    expect(ferry.getState().sizesPending).toBe(0);
  });

  test('size restrictions refuse files as sizes arrive, as when adding; one toast at the end', async () => {
    make({ restrictions: { maxFileSize: 10 } });
    const failed = vi.fn();
    const removed = vi.fn();
    ferry.on('restriction-failed', failed);
    ferry.on('file-removed', removed);
    // Every third file is too big.
    const descriptors = picked(300, (i) => (i % 3 === 2 ? 11 : 5));
    const ids = ferry.addFiles(descriptors);
    expect(ids).toHaveLength(300);
    expect(failed).not.toHaveBeenCalled();

    await nextSlice();
    const firstSlice = failed.mock.calls.length;
    expect(firstSlice).toBeGreaterThan(0);
    expect(firstSlice).toBeLessThan(100);
    expect(failed.mock.calls[0]).toEqual([
      descriptors[2],
      { code: 'max-file-size', message: 'f2.txt exceeds maximum allowed size of 10 B', fileName: 'f2.txt' },
    ]);
    expect(removed.mock.calls[0]?.[0]).toMatchObject({ id: ids[2], name: 'f2.txt' });
    expect(removed.mock.calls[0]?.[1]).toBe('restriction-failed');
    expect(ferry.getFile(ids[2] ?? '')).toBeUndefined();
    expect(ferry.getState().info).toEqual([]);

    await allSlices();
    expect(failed).toHaveBeenCalledTimes(100);
    expect(ferry.getState().fileIds).toHaveLength(200);
    expect(ferry.getState().sizesPending).toBe(0);
    expect(ferry.getState().info.map((i) => [i.type, i.message])).toEqual([
      ['error', 'f2.txt exceeds maximum allowed size of 10 B (and 99 more)'],
    ]);
  });

  test('total size and duplicates are checked in the order files were added', async () => {
    make({ restrictions: { maxTotalFileSize: 1000 } });
    const same = pickedFile('same.txt', 1, 7);
    const failed = vi.fn();
    ferry.on('restriction-failed', failed);
    ferry.addFiles([...picked(150, () => 5), { data: same }, { data: same }, ...picked(100, () => 5, 'g')]);
    await allSlices();
    const codes = failed.mock.calls.map((c) => c[1].code);
    // 150 * 5 + 1 = 751 bytes, then the duplicate, then 49 more fit (996), 51 do not.
    expect(codes).toEqual(['duplicate', ...Array(51).fill('max-total-file-size')]);
    expect(ferry.getState().fileIds).toHaveLength(150 + 1 + 49);
  });

  test('checks that need no size (count, type) refuse files at once', () => {
    make({ restrictions: { maxNumberOfFiles: 200 } });
    const failed = vi.fn();
    ferry.on('restriction-failed', failed);
    const ids = ferry.addFiles(picked(250));
    expect(ids).toHaveLength(200);
    expect(failed).toHaveBeenCalledTimes(50);
    expect(reads.size).toBe(0);
  });

  test('upload() waits until every size is read, and uploads only files that passed', async () => {
    make({ restrictions: { maxFileSize: 10 } });
    ferry.addFiles(picked(300, (i) => (i === 0 ? 11 : 3)));
    const done = ferry.upload();
    await vi.advanceTimersByTimeAsync(0);
    expect(uploaded).toHaveLength(0);
    await nextSlice();
    expect(uploaded).toHaveLength(0);
    await allSlices();
    const result = await done;
    expect(uploaded).toHaveLength(299);
    expect(uploaded.every((f) => f.size === 3 && !f.sizePending)).toBe(true);
    expect(result.successful).toHaveLength(299);
  });

  test('a file removed before its size is read is skipped; a batch added meanwhile queues behind', async () => {
    make({ restrictions: { maxFileSize: 10 } });
    const [first] = ferry.addFiles(picked(200));
    ferry.removeFile(first ?? '');
    expect(ferry.getState().sizesPending).toBe(199);
    // Small, but sizes are still being read: it waits its turn, so checks keep their order.
    const late = ferry.addFiles([{ data: pickedFile('big.bin', 11) }]);
    expect(late).toHaveLength(1);
    expect(ferry.getFile(late[0] ?? '')?.sizePending).toBe(true);
    await allSlices();
    expect(reads.size).toBe(199 + 1);
    expect(ferry.getState().fileIds).toHaveLength(199);
    expect(ferry.getState().sizesPending).toBe(0);
  });
});

describe('a small batch', () => {
  test('reads sizes while adding, as before: refused at once, nothing pending', () => {
    make({ restrictions: { maxFileSize: 10 } });
    const failed = vi.fn();
    ferry.on('restriction-failed', failed);
    const ids = ferry.addFiles(picked(100, (i) => (i === 0 ? 11 : 1)));
    expect(ids).toHaveLength(99);
    expect(failed).toHaveBeenCalledTimes(1);
    expect(reads.size).toBe(100);
    expect(ferry.getState().sizesPending).toBe(0);
    expect(ferry.getFile(ids[0] ?? '')).toMatchObject({ size: 1 });
    expect(ferry.getFile(ids[0] ?? '')).not.toHaveProperty('sizePending');
    expect(yields).toHaveLength(0);
  });
});
