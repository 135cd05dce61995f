/** Keeping the bytes (`bytes.ts`: the copy queue and ByteKeeper): what is copied, where, and when not. */
import { IDBDatabase, IDBFactory } from 'fake-indexeddb';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import {
  big,
  bytesOf,
  closeEngines,
  engines,
  file,
  ManualUploader,
  offline,
  page,
  rewrite,
  settle,
  withStorage,
} from '../test/recovery-page.ts';
import { BLOBS, RecoveryDb } from './db.ts';

afterEach(() => {
  vi.unstubAllGlobals();
  closeEngines();
});

describe('keeping the bytes', () => {
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
      // Sizes (pending in a batch this large) are read in one slice, on a clock that does not
      // move: slices cut by the wall clock would copy in as many turns as the machine's load
      // makes.
      const first = await page(db, { sizing: { now: () => 0 } });
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

  test('small files whose copy is under way when the page goes away come back with their bytes, not as ghosts', async () => {
    const window = new EventTarget();
    vi.stubGlobal('addEventListener', window.addEventListener.bind(window));
    vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window));
    const db = new IDBFactory();
    const first = await page(db);
    // The copy's transaction is issued (and lands) at once; the page hears of it only later,
    // after it went away, as a busy browser answers.
    let answer: () => void = () => undefined;
    const heard = new Promise<void>((ok) => {
      answer = ok;
    });
    let copies = 0;
    const write = RecoveryDb.prototype.write;
    const spy = vi.spyOn(RecoveryDb.prototype, 'write').mockImplementation(function (this: RecoveryDb, ...args) {
      const done = write.apply(this, args);
      if (args[0] !== BLOBS || args[1].length === 0) return done;
      copies += 1;
      return heard.then(() => done);
    });
    try {
      const ids = first.ferry.addFiles([{ data: file('a.bin', [1]) }, { data: file('b.bin', [2, 2]) }]) as string[];
      await vi.waitFor(() => expect(copies).toBe(1), { timeout: 5000 });
      window.dispatchEvent(new Event('pagehide'));

      const second = await page(db);
      expect(second.ferry.recovery?.getSnapshot().ghosts).toEqual([]);
      expect(await bytesOf(second.ferry.getFile(ids[0] as string))).toEqual([1]);
      expect(await bytesOf(second.ferry.getFile(ids[1] as string))).toEqual([2, 2]);
    } finally {
      answer();
      spy.mockRestore();
    }
  });
});
