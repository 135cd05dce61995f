/** Ghosts (`ghosts.ts`): restored without bytes, revived when the same file is added again. */
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, describe, expect, test } from 'vitest';
import { bytesOf, closeEngines, file, names, page, settle } from '../test/recovery-page.ts';

afterEach(closeEngines);

describe('ghosts', () => {
  test('a file too large to copy comes back as a ghost; adding the same file again resumes it', async () => {
    const db = new IDBFactory();
    const first = await page(db, { maxCopySize: 3 });
    const id = first.ferry.addFile({ data: file('big.bin', [9, 8, 7, 6]) }) as string;
    void first.ferry.upload();
    await settle(first.ferry);
    first.uploader.calls[0]?.ctx.patchFile({ tus: { uploadUrl: 'http://x/files/big' } });
    await settle(first.ferry);
    first.ferry.destroy();

    const second = await page(db, { maxCopySize: 3 });
    const ghost = second.ferry.getFile(id);
    expect(ghost?.ghost).toBe(true);
    expect(ghost?.data).toBeNull();
    expect(second.ferry.recovery?.getSnapshot().ghosts).toEqual([id]);
    // A ghost is never uploaded on its own.
    await second.ferry.upload();
    second.ferry.resumeAll();
    expect(second.uploader.calls).toHaveLength(0);
    // Another file of the same name but another modification time is a new file.
    const other = second.ferry.addFile({ data: file('big.bin', [9, 8, 7, 6], 5) });
    expect(other).not.toBeNull();
    expect(other).not.toBe(id);
    second.ferry.removeFile(other as string);

    expect(second.ferry.addFiles([{ data: file('big.bin', [9, 8, 7, 6]) }])).toEqual([]);
    await settle(second.ferry);
    const revived = second.ferry.getFile(id);
    expect(revived?.ghost).toBe(false);
    expect(await bytesOf(revived)).toEqual([9, 8, 7, 6]);
    expect(second.uploader.calls).toHaveLength(1);
    expect(second.uploader.calls[0]?.file.tus?.uploadUrl).toBe('http://x/files/big');
    expect(second.ferry.getFiles()).toHaveLength(1);
    expect(second.ferry.recovery?.getSnapshot().ghosts).toEqual([]);
  });
});

/** Lookups of a picked file's size or modification time (a disk read in Chromium, see sizing.ts). */
const lookups = { count: 0, clock: 0 };

/** A picked file as Chromium gives it: each read of `size` or `lastModified` is a lookup (0.35 ms). */
function pickedFile(name: string, bytes: number[], lastModified = 1_700_000_000_000): File {
  const f = file(name, bytes, lastModified);
  Object.defineProperties(f, { size: { get: lookedUp(f.size) }, lastModified: { get: lookedUp(lastModified) } });
  return f;
}

/** A getter that counts one lookup and moves the clock by its cost. */
function lookedUp<T>(value: T): () => T {
  return () => {
    lookups.count += 1;
    lookups.clock += 0.35;
    return value;
  };
}

/** Sizing whose slices never run: the page goes away with every size of the batch pending. */
const neverSized = { yieldToMain: () => new Promise<void>(() => undefined) };

/** Sizing whose slices run one at a time when the test says so, on the lookups' clock. */
function steppedSizing() {
  const yields: (() => void)[] = [];
  const next = async () => {
    const release = yields.shift();
    release?.();
    await new Promise((r) => setTimeout(r, 0));
    return release !== undefined;
  };
  return {
    options: { now: () => lookups.clock, yieldToMain: () => new Promise<void>((ok) => yields.push(ok)) },
    next,
    all: async () => {
      while (await next());
    },
  };
}

/**
 * A first page: a 4-byte file too large to copy, uploading with an upload URL, then a batch of
 * 150 small files that goes away before their sizes are read. Their ids, big first.
 */
async function leaveWhileSizing(db: IDBFactory): Promise<{ big: string; batch: string[] }> {
  const first = await page(db, { maxCopySize: 3, sizing: neverSized });
  const big = first.ferry.addFile({ data: file('big.bin', [9, 8, 7, 6]) }) as string;
  void first.ferry.upload();
  await settle(first.ferry);
  first.uploader.calls[0]?.ctx.patchFile({ tus: { uploadUrl: 'http://x/files/big' } });
  const batch = first.ferry.addFiles(names(150).map((n, i) => ({ data: file(n, [i % 256]) })));
  first.ferry.setFileMeta(batch[7] as string, { caption: 'typed before the reload' });
  await settle(first.ferry);
  expect(first.ferry.getState().sizesPending).toBe(150);
  first.ferry.destroy();
  return { big, batch };
}

describe('recovery of files saved while their sizes were pending', () => {
  test('such a file comes back as a ghost without size; adding it again resumes it, meta kept', async () => {
    const db = new IDBFactory();
    const { batch } = await leaveWhileSizing(db);
    const id = batch[7] as string;

    const second = await page(db, { maxCopySize: 3 });
    expect(second.ferry.getFile(id)).toMatchObject({ ghost: true, size: null, data: null });
    expect(second.ferry.recovery?.getSnapshot().ghosts).toHaveLength(151);
    // Picked again on its own (a small batch: compared while adding).
    expect(second.ferry.addFiles([{ data: file('f7.bin', [7]) }])).toEqual([]);
    expect(second.ferry.getFile(id)).toMatchObject({
      ghost: false,
      size: 1,
      progress: { bytesTotal: 1 },
      meta: { caption: 'typed before the reload' },
    });
    expect(second.ferry.getFiles()).toHaveLength(151);
    expect(second.ferry.recovery?.getSnapshot().ghosts).not.toContain(id);
    await settle(second.ferry);
    // It was waiting to upload when the page went away: it starts, as the same file.
    expect(second.uploader.calls.map((c) => c.file.id)).toEqual([id]);
    // Its record now has the size: after another reload it comes back with its bytes.
    second.ferry.destroy();
    const third = await page(db, { maxCopySize: 3 });
    expect(third.ferry.getFile(id)?.ghost).toBeFalsy();
    expect(await bytesOf(third.ferry.getFile(id))).toEqual([7]);
  });

  test('a ghost from a folder takes the file of the same relative path, not one of the same name elsewhere', async () => {
    const db = new IDBFactory();
    const first = await page(db, { sizing: neverSized });
    const ids = first.ferry.addFiles(names(150).map((n, i) => ({ data: file(n, [i % 256]), relativePath: `a/${n}` })));
    await settle(first.ferry);
    first.ferry.destroy();

    const second = await page(db);
    const elsewhere = second.ferry.addFiles([{ data: file('f7.bin', [7]), relativePath: 'b/f7.bin' }]);
    expect(elsewhere).toHaveLength(1);
    expect(second.ferry.getFile(ids[7] as string)?.ghost).toBe(true);
    expect(second.ferry.addFiles([{ data: file('f7.bin', [7]), relativePath: 'a/f7.bin' }])).toEqual([]);
    expect(second.ferry.getFile(ids[7] as string)).toMatchObject({ ghost: false, relativePath: 'a/f7.bin', size: 1 });
    expect(second.ferry.getFiles()).toHaveLength(151);
  });

  test('a large batch added again is compared with its ghosts in time slices, never while adding', async () => {
    const db = new IDBFactory();
    const { big, batch } = await leaveWhileSizing(db);
    const sizing = steppedSizing();
    const second = await page(db, { maxCopySize: 3, sizing: sizing.options });
    expect(second.ferry.recovery?.getSnapshot().ghosts).toHaveLength(151);

    const again = [pickedFile('big.bin', [9, 8, 7, 6]), ...names(150).map((n, i) => pickedFile(n, [i % 256]))];
    lookups.count = 0;
    expect(second.ferry.addFiles(again.map((data) => ({ data })))).toEqual([]);
    expect(lookups.count).toBe(0);
    expect(second.ferry.getFiles()).toHaveLength(151);

    // One slice: some files are compared and revived, the others are still ghosts.
    await sizing.next();
    const left = second.ferry.recovery?.getSnapshot().ghosts.length ?? 0;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(151);
    await sizing.all();
    expect(second.ferry.recovery?.getSnapshot().ghosts).toEqual([]);
    // The same files, no other, in the order they were added before the reload.
    expect(second.ferry.getFiles().map((f) => f.id)).toEqual([big, ...batch]);
    expect(second.ferry.getFiles().every((f) => !f.ghost && f.data !== null && f.size !== null)).toBe(true);
    await settle(second.ferry);
    // The started file resumes from its upload URL; the others start, each as itself.
    const calls = second.uploader.calls;
    expect(calls.find((c) => c.file.id === big)?.file.tus?.uploadUrl).toBe('http://x/files/big');
    expect(calls.map((c) => c.file.id).sort()).toEqual([big, ...batch].sort());
  });

  test("in a large batch, another file of a ghost's name is added as new once its size is read; upload() waits", async () => {
    const db = new IDBFactory();
    const { big, batch } = await leaveWhileSizing(db);
    const sizing = steppedSizing();
    const second = await page(db, { maxCopySize: 3, sizing: sizing.options });

    // big.bin has changed on disk (5 bytes now): it is not the file whose upload was started.
    const changed = pickedFile('big.bin', [1, 2, 3, 4, 5]);
    const again = [changed, ...names(150).map((n, i) => pickedFile(n, [i % 256]))];
    lookups.count = 0;
    expect(second.ferry.addFiles(again.map((data) => ({ data })))).toEqual([]);
    expect(lookups.count).toBe(0);
    // Upload at once: it waits for the comparisons, so the file that turns out new goes too.
    void second.ferry.upload();
    await sizing.all();

    expect(second.ferry.recovery?.getSnapshot().ghosts).toEqual([big]);
    expect(second.ferry.getFile(big)).toMatchObject({ ghost: true, data: null });
    const added = second.ferry.getFiles().filter((f) => f.id !== big && !batch.includes(f.id));
    expect(added.map((f) => [f.name, f.size, f.data === changed])).toEqual([['big.bin', 5, true]]);
    expect(second.ferry.getFiles()).toHaveLength(152);
    await settle(second.ferry);
    const uploading = second.uploader.calls.map((c) => c.file.id);
    expect(uploading).toContain(added[0]?.id);
    expect(uploading).not.toContain(big);
  });
});
