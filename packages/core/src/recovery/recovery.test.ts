import { IDBDatabase, IDBFactory, IDBObjectStore } from 'fake-indexeddb';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { Ferry, type FerryOptions } from '../ferry.ts';
import { initialState } from '../reducer.ts';
import type { FerryFile, FerryState } from '../types.ts';
import type { UploadContext, Uploader, UploadResult } from '../uploader.ts';
import { SMALL_COPY_SIZE } from './bytes.ts';
import { BLOBS, dbName } from './db.ts';
import { Recovery, type SavedRecord } from './recovery.ts';

interface Call {
  file: FerryFile;
  ctx: UploadContext;
  resolve: (r: UploadResult) => void;
}

/** An uploader the test drives by hand; it records what each call was given. */
class ManualUploader implements Uploader {
  calls: Call[] = [];
  cancelled: FerryFile[] = [];
  upload(file: FerryFile, ctx: UploadContext): Promise<UploadResult> {
    return new Promise((resolve, reject) => {
      this.calls.push({ file, ctx, resolve });
      ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
  }
  async cancel(file: FerryFile): Promise<void> {
    this.cancelled.push(file);
  }
}

const offline = { isOnline: () => true, target: new EventTarget() };
const engines: Ferry[] = [];
afterEach(() => {
  for (const e of engines.splice(0)) e.destroy();
});

/** One page load: an engine over the given IndexedDB (the "browser profile"). */
async function page(
  db: IDBFactory,
  options: { id?: string; maxCopySize?: number; sizing?: FerryOptions['sizing']; fresh?: boolean } = {},
) {
  const uploader = new ManualUploader();
  const Engine = options.fresh ? await freshFerry() : Ferry;
  const ferry = new Engine({
    id: options.id,
    uploader,
    online: offline,
    recovery: { indexedDB: db, opfs: false, throttle: 20, maxCopySize: options.maxCopySize },
    sizing: options.sizing,
  });
  engines.push(ferry);
  await settle(ferry);
  return { ferry, uploader };
}

/**
 * The engine as a new page loads it: fresh modules, so file ids start again from a new random
 * prefix and counter 1, as they do after a real reload.
 */
async function freshFerry(): Promise<typeof Ferry> {
  vi.resetModules();
  return (await import('../ferry.ts')).Ferry;
}

/** Lets recovery read the records back (start) and finish its writes. */
async function settle(ferry: Ferry) {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setTimeout(r, 5));
  await ferry.recovery?.flush();
}

const file = (name: string, bytes: number[], lastModified = 1_700_000_000_000) =>
  new File([new Uint8Array(bytes)], name, { type: 'application/octet-stream', lastModified });

/** Runs `body` with `navigator.storage` (the OPFS entry point) replaced by `storage`. */
async function withStorage(storage: unknown, body: () => Promise<void>): Promise<void> {
  const g = globalThis as { navigator?: { storage?: unknown } };
  const hadNavigator = g.navigator !== undefined;
  g.navigator ??= {};
  const nav = g.navigator;
  const before = Object.getOwnPropertyDescriptor(nav, 'storage');
  Object.defineProperty(nav, 'storage', { value: storage, configurable: true });
  try {
    await body();
  } finally {
    if (before) Object.defineProperty(nav, 'storage', before);
    else delete nav.storage;
    if (!hadNavigator) delete g.navigator;
  }
}

/** A file just over the size copied into IndexedDB in batches, filled with `fill`. */
const big = (name: string, fill: number) =>
  new File([new Uint8Array(SMALL_COPY_SIZE + 1).fill(fill)], name, { type: 'application/octet-stream' });

/**
 * Rewrites the values of a store of the default engine's database (undefined deletes one), as
 * another version of Ferry, or the browser, might have left them.
 */
async function rewrite(db: IDBFactory, store: string, change: (value: unknown, key: string) => unknown): Promise<void> {
  const open = db.open(dbName('ferry'));
  const conn = await new Promise<IDBDatabase>((ok, fail) => {
    open.onsuccess = () => ok(open.result);
    open.onerror = () => fail(open.error);
  });
  const tx = conn.transaction(store, 'readwrite');
  const cursor = tx.objectStore(store).openCursor();
  cursor.onsuccess = () => {
    const at = cursor.result;
    if (!at) return;
    const next = change(at.value, String(at.key));
    if (next === undefined) at.delete();
    else at.update(next);
    at.continue();
  };
  await new Promise((ok, fail) => {
    tx.oncomplete = ok;
    tx.onerror = () => fail(tx.error);
  });
  conn.close();
}

async function bytesOf(f: FerryFile | undefined): Promise<number[]> {
  if (!f?.data) return [];
  return [...new Uint8Array(await f.data.arrayBuffer())];
}

describe('recovery', () => {
  test('a file in flight comes back after a reload with its bytes, progress and upload URL, and resumes', async () => {
    const db = new IDBFactory();
    const first = await page(db);
    const id = first.ferry.addFile({ data: file('a.bin', [1, 2, 3, 4]) }) as string;
    const doneId = first.ferry.addFile({ data: file('done.bin', [5]) }) as string;
    void first.ferry.upload();
    await settle(first.ferry);
    const call = first.uploader.calls.find((c) => c.file.id === id);
    call?.ctx.patchFile({ tus: { uploadUrl: 'http://x/files/abc' } });
    call?.ctx.onProgress(2, 4);
    first.uploader.calls.find((c) => c.file.id === doneId)?.resolve({ uploadURL: 'http://x/files/done' });
    await new Promise((r) => setTimeout(r, 600)); // the progress throttle
    await settle(first.ferry);
    expect(await first.ferry.recovery?.stored()).toEqual({ records: 2, copies: 1 });
    first.ferry.destroy(); // the tab goes away

    const second = await page(db);
    const back = second.ferry.getFile(id);
    expect(back?.tus?.uploadUrl).toBe('http://x/files/abc');
    expect(back?.progress.bytesUploaded).toBe(2);
    expect(await bytesOf(back)).toEqual([1, 2, 3, 4]);
    expect((back?.data as File | null | undefined)?.name).toBe('a.bin');
    expect((back?.data as File | null | undefined)?.lastModified).toBe(1_700_000_000_000);
    // The completed file stays completed and is not sent again.
    expect(second.ferry.getFile(doneId)?.state).toBe('complete');
    expect(second.ferry.getFile(doneId)?.uploadURL).toBe('http://x/files/done');
    // The other resumes by itself, with the upload URL the uploader continues from.
    expect(second.uploader.calls.map((c) => [c.file.id, c.file.tus?.uploadUrl])).toEqual([[id, 'http://x/files/abc']]);
    expect(second.ferry.recovery?.getSnapshot().restored).toBe(2);
    expect(second.ferry.getState().info.at(-1)?.message).toBe('Restored 2 files from your last visit.');

    second.uploader.calls[0]?.resolve({ uploadURL: 'http://x/files/abc' });
    await settle(second.ferry);
    expect(second.ferry.getFile(id)?.state).toBe('complete');
    // Every file has completed: the upload is over and the storage is empty.
    expect(await second.ferry.recovery?.stored()).toEqual({ records: 0, copies: 0 });
    second.ferry.destroy();
    const third = await page(db);
    expect(third.ferry.getFiles()).toEqual([]);
  });

  test('waiting and paused files come back as they were, without starting', async () => {
    const db = new IDBFactory();
    const first = await page(db);
    first.ferry.addFile({ data: file('w.bin', [1]) });
    await settle(first.ferry);
    first.ferry.destroy();
    const second = await page(db);
    expect(second.ferry.getFiles().map((f) => [f.name, f.state])).toEqual([['w.bin', 'waiting']]);
    expect(second.uploader.calls).toHaveLength(0);
  });

  test('two engine ids on one page keep their files apart', async () => {
    const db = new IDBFactory();
    const a = await page(db, { id: 'left' });
    const b = await page(db, { id: 'right' });
    a.ferry.addFile({ data: file('left.bin', [1]) });
    b.ferry.addFile({ data: file('right.bin', [2]) });
    await settle(a.ferry);
    await settle(b.ferry);
    a.ferry.destroy();
    b.ferry.destroy();
    const a2 = await page(db, { id: 'left' });
    const b2 = await page(db, { id: 'right' });
    expect(a2.ferry.getFiles().map((f) => f.name)).toEqual(['left.bin']);
    expect(b2.ferry.getFiles().map((f) => f.name)).toEqual(['right.bin']);
  });

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

  test('discard removes the restored files, cancels their server uploads and empties the storage', async () => {
    const db = new IDBFactory();
    const first = await page(db);
    first.ferry.addFile({ data: file('p.bin', [1, 2]) });
    const id = first.ferry.getFiles()[0]?.id as string;
    void first.ferry.upload();
    await settle(first.ferry);
    first.uploader.calls[0]?.ctx.patchFile({ tus: { uploadUrl: 'http://x/files/p' } });
    first.ferry.pauseResume(id);
    await settle(first.ferry);
    first.ferry.destroy();

    const second = await page(db);
    expect(second.ferry.getFile(id)?.state).toBe('paused');
    expect(second.uploader.calls).toHaveLength(0);
    second.ferry.recovery?.discard();
    expect(second.ferry.getFiles()).toEqual([]);
    expect(second.uploader.cancelled.map((f) => f.tus?.uploadUrl)).toEqual(['http://x/files/p']);
    expect(await second.ferry.recovery?.stored()).toEqual({ records: 0, copies: 0 });
  });

  test('a copy that fails (quota) leaves a ghost and the page goes on', async () => {
    const db = new IDBFactory();
    const storage = { getDirectory: async () => quotaDir };
    const quotaDir = {
      getDirectoryHandle: async () => quotaDir,
      getFileHandle: async () => ({
        createWritable: async () => {
          throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        },
      }),
      removeEntry: async () => undefined,
    };
    await withStorage(storage, async () => {
      const make = () =>
        new Ferry({ uploader: new ManualUploader(), online: offline, recovery: { indexedDB: db, throttle: 5 } });
      const first = make();
      engines.push(first);
      // Larger than SMALL_COPY_SIZE, so it goes to the (full) OPFS rather than IndexedDB.
      const id = first.addFile({ data: big('q.bin', 1) });
      await settle(first);
      expect(first.getFile(id as string)?.state).toBe('waiting');
      first.destroy();
      const second = make();
      engines.push(second);
      await settle(second);
      expect(second.getFile(id as string)?.ghost).toBe(true);
    });
  });

  test('files that finish uploading before their turn to be copied are never copied', async () => {
    const db = new IDBFactory();
    let writes = 0;
    const dir = {
      getDirectoryHandle: async () => dir,
      getFileHandle: async () => ({
        createWritable: async () => {
          writes += 1;
          // A slow disk: the other copies wait their turn while the uploads finish.
          await new Promise((r) => setTimeout(r, 50));
          return new WritableStream();
        },
      }),
      removeEntry: async () => undefined,
    };
    await withStorage({ getDirectory: async () => dir }, async () => {
      const uploader = new ManualUploader();
      const ferry = new Ferry({ uploader, online: offline, recovery: { indexedDB: db, throttle: 5 } });
      engines.push(ferry);
      await settle(ferry);
      // Larger than SMALL_COPY_SIZE: each is copied to OPFS on its own.
      ferry.addFiles([1, 2, 3, 4].map((n) => ({ data: big(`s${n}.bin`, n) })));
      void ferry.upload();
      while (uploader.calls.length < 4) await new Promise((r) => setTimeout(r, 0));
      // Three finish at once; the fourth is still uploading, so the batch's records stay.
      for (const call of uploader.calls.slice(0, 3)) call.resolve({});
      await settle(ferry);
      await new Promise((r) => setTimeout(r, 300));
      expect(ferry.getFiles().map((f) => f.state)).toEqual(['complete', 'complete', 'complete', 'uploading']);
      // The copy already under way when they finished, and the fourth file's; never the others.
      expect(writes).toBeLessThanOrEqual(2);
    });
  });

  test('small files are copied into and read back from IndexedDB many per transaction', async () => {
    const db = new IDBFactory();
    const transaction = vi.spyOn(IDBDatabase.prototype, 'transaction');
    const blobWrites = () =>
      transaction.mock.calls.filter(([stores, mode]) => String(stores) === BLOBS && mode === 'readwrite').length;
    const blobReads = () =>
      transaction.mock.calls.filter(([stores, mode]) => String(stores) === BLOBS && mode !== 'readwrite').length;
    try {
      const first = await page(db);
      const ids = first.ferry.addFiles(
        Array.from({ length: 250 }, (_, n) => ({ data: file(`m${n}.bin`, [n % 256, 7], 1_700_000_000_000 + n) })),
      );
      await settle(first.ferry);
      // 250 files, 100 per transaction: 3 writes, not 250.
      expect(blobWrites()).toBeLessThanOrEqual(3);
      expect(await first.ferry.recovery?.stored()).toEqual({ records: 250, copies: 250 });
      first.ferry.destroy();
      // Meanwhile one copy went missing and another changed size: both come back as ghosts.
      const [gone, changed] = [ids[10], ids[200]] as string[];
      await rewrite(db, BLOBS, (blob, key) => (key === gone ? undefined : key === changed ? new Blob([]) : blob));
      transaction.mockClear();
      const second = await page(db);
      // Reading 250 records back takes longer than settle()'s few ticks.
      for (let i = 0; i < 100 && second.ferry.getFiles().length < 250; i += 1)
        await new Promise((r) => setTimeout(r, 10));
      expect(second.ferry.getFiles()).toHaveLength(250);
      // The copies are read a few transactions at a time, not one per file.
      expect(blobReads()).toBeLessThanOrEqual(3);
      const shownAsGhosts = second.ferry.getFiles().filter((f) => f.ghost);
      expect(new Set(shownAsGhosts.map((f) => f.id))).toEqual(new Set([gone, changed]));
      expect(new Set(second.ferry.recovery?.getSnapshot().ghosts)).toEqual(new Set([gone, changed]));
      expect(await bytesOf(second.ferry.getFile(ids[249] as string))).toEqual([249, 7]);
    } finally {
      transaction.mockRestore();
    }
  });

  test('a file that starts and finishes within the throttle window is written complete, once', async () => {
    const db = new IDBFactory();
    // The states records had when written (a record object is updated in place afterwards).
    const written: [IDBValidKey | undefined, string][] = [];
    const original = IDBObjectStore.prototype.put;
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
      this: IDBObjectStore,
      value: unknown,
      key?: IDBValidKey,
    ) {
      const state = (value as Partial<SavedRecord>).file?.state;
      if (state) written.push([key, state]);
      return original.call(this, value, key);
    });
    const states = (id: string) => written.filter(([key]) => key === id).map(([, state]) => state);
    try {
      const uploader = new ManualUploader();
      const ferry = new Ferry({ uploader, online: offline, recovery: { indexedDB: db, opfs: false, throttle: 1000 } });
      engines.push(ferry);
      await settle(ferry);
      const [quick, slow] = ferry.addFiles([{ data: file('q.bin', [1]) }, { data: file('s.bin', [2]) }]);
      await settle(ferry);
      void ferry.upload();
      while (uploader.calls.length < 2) await new Promise((r) => setTimeout(r, 0));
      // Longer than recovery takes to look at a change, well within the throttle.
      await new Promise((r) => setTimeout(r, 150));
      uploader.calls.find((c) => c.file.id === quick)?.resolve({});
      await settle(ferry);
      // Written waiting (added, then its bytes copied) and complete: the start in between never
      // on its own.
      expect(states(quick as string)).not.toContain('uploading');
      expect(states(quick as string).at(-1)).toBe('complete');
      await new Promise((r) => setTimeout(r, 1100));
      await settle(ferry);
      // The one still uploading is written with the throttle.
      expect(states(slow as string).at(-1)).toBe('uploading');
    } finally {
      put.mockRestore();
    }
  });

  test('restored files come back in the order they were added, across batches, removals and reloads', async () => {
    const db = new IDBFactory();
    const first = await page(db, { fresh: true });
    const remote = { isRemote: true, name: 'r.bin', size: 3, remote: { url: 'http://o/r', body: {} } };
    const added: string[] = [];
    // Several batches, a remote file (no bytes to copy) just before one of them, 46 files in all:
    // in key order, base-36 ids sort apart from the add order (…-10 before …-9, …-1a before …-z).
    for (let b = 0; b < 3; b += 1) {
      if (b === 1) added.push(first.ferry.addFile(remote) as string);
      added.push(...first.ferry.addFiles(names(15).map((n, i) => ({ data: file(`${b}-${n}`, [b, i]) }))));
      await settle(first.ferry);
    }
    const removed = [added[3], added[20], added[44]] as string[];
    first.ferry.removeFiles(removed);
    await settle(first.ferry);
    first.ferry.destroy();

    const kept = added.filter((id) => !removed.includes(id));
    const second = await page(db, { fresh: true });
    expect(second.ferry.getFiles().map((f) => f.id)).toEqual(kept);
    // After the restore: more files, one restored file removed, and another reload.
    const more = second.ferry.addFiles(names(12).map((n, i) => ({ data: file(`later-${n}`, [i]) })));
    second.ferry.removeFile(kept[0] as string);
    await settle(second.ferry);
    second.ferry.destroy();

    const third = await page(db, { fresh: true });
    expect(third.ferry.getFiles().map((f) => f.id)).toEqual([...kept.slice(1), ...more]);
  });

  test('files added while the records are read list after the restored ones, on this page and the next', async () => {
    const db = new IDBFactory();
    const first = await page(db, { fresh: true });
    const restored = first.ferry.addFiles(names(3).map((n, i) => ({ data: file(`old-${n}`, [i]) })));
    await settle(first.ferry);
    first.ferry.destroy();

    // Added in the same task as the engine is made: before recovery has read anything back.
    const Engine = await freshFerry();
    const second = new Engine({
      uploader: new ManualUploader(),
      online: offline,
      recovery: { indexedDB: db, opfs: false, throttle: 20 },
    });
    engines.push(second);
    const early = second.addFiles(names(2).map((n, i) => ({ data: file(`new-${n}`, [9, i]) })));
    await settle(second);
    expect(second.recovery?.getSnapshot().restored).toBe(3);
    expect(second.getFiles().map((f) => f.id)).toEqual([...restored, ...early]);
    second.destroy();

    const third = await page(db, { fresh: true });
    expect(third.ferry.getFiles().map((f) => f.id)).toEqual([...restored, ...early]);
  });

  test('records saved before the add order was kept still restore, oldest first', async () => {
    const db = new IDBFactory();
    const first = await page(db, { fresh: true });
    const old = first.ferry.addFiles(names(40).map((n, i) => ({ data: file(n, [i]) })));
    await settle(first.ferry);
    first.ferry.destroy();
    await rewrite(db, 'files', (record) => {
      const { order: _order, ...older } = record as { order?: number };
      return older;
    });

    const second = await page(db, { fresh: true });
    expect(second.ferry.getFiles().map((f) => f.id)).toEqual(old);
    expect(second.ferry.getFiles().every((f) => !f.ghost && f.data !== null)).toBe(true);
    // One of them is written again (its meta changed): it keeps its place among the others.
    second.ferry.setFileMeta(old[25] as string, { caption: 'changed after the update' });
    const more = second.ferry.addFiles(names(5).map((n, i) => ({ data: file(`new-${n}`, [i]) })));
    await settle(second.ferry);
    second.ferry.destroy();

    const third = await page(db, { fresh: true });
    expect(third.ferry.getFiles().map((f) => f.id)).toEqual([...old, ...more]);
  });

  test('a remote file keeps its companion token and reattaches after a reload', async () => {
    const db = new IDBFactory();
    const first = await page(db);
    const id = first.ferry.addFile({
      isRemote: true,
      name: 'r.bin',
      size: 10,
      remote: { url: 'http://o/r.bin', body: { url: 'http://o/r.bin' } },
    }) as string;
    void first.ferry.upload();
    await settle(first.ferry);
    first.uploader.calls[0]?.ctx.patchFile({ serverToken: 'tok-1' });
    await settle(first.ferry);
    first.ferry.destroy();
    const second = await page(db);
    expect(second.uploader.calls.map((c) => [c.file.id, c.file.serverToken])).toEqual([[id, 'tok-1']]);
  });

  test('state changes are diffed after the task that made them, a burst of them once', async () => {
    const listeners: ((state: FerryState) => void)[] = [];
    let walks = 0;
    // A state whose list of files counts how often the diff walks it.
    const stateWith = (ids: string[]): FerryState => {
      const files = Object.fromEntries(ids.map((id) => [id, { id, state: 'waiting', data: null } as FerryFile]));
      return {
        ...initialState,
        files,
        get fileIds() {
          walks += 1;
          return ids;
        },
      };
    };
    let current = stateWith([]);
    const recovery = new Recovery(
      {
        scope: 'burst',
        getState: () => current,
        subscribe: (listener) => {
          listeners.push(listener);
          return () => undefined;
        },
        restore: () => undefined,
        run: () => undefined,
        revive: () => undefined,
        add: () => undefined,
        removeFiles: () => undefined,
        info: () => undefined,
        i18n: (key) => key,
      },
      { indexedDB: new IDBFactory(), opfs: false },
    );
    await recovery.start();
    walks = 0;
    for (const ids of [['a'], ['a', 'b'], ['a', 'b', 'c']]) {
      current = stateWith(ids);
      for (const l of listeners) l(current);
    }
    // Nothing walked inside the dispatches (a pick of 10,000 files waits on that task)...
    expect(walks).toBe(0);
    // No sizes pending: the burst is compared within recovery's 50 ms window.
    await new Promise((r) => setTimeout(r, 80));
    // ...then one diff of the last state, which reads the list twice: to walk it, and to see
    // whether every file has finished. Three diffs would read it six times.
    expect(walks).toBe(2);
    await recovery.flush();
    recovery.stop();
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

const names = (n: number) => Array.from({ length: n }, (_, i) => `f${i}.bin`);

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
