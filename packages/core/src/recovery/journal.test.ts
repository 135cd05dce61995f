/** The journal (`journal.ts`, `table.ts`): when records are written, in which order they come back. */
import { IDBFactory, IDBObjectStore } from 'fake-indexeddb';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import { initialState } from '../reducer.ts';
import {
  closeEngines,
  engines,
  file,
  ManualUploader,
  names,
  offline,
  page,
  rewrite,
  settle,
} from '../test/recovery-page.ts';
import type { FerryFile, FerryState } from '../types.ts';
import { BLOBS, FILES, RecoveryDb } from './db.ts';
import { PACED_ABOVE } from './journal.ts';
import { Recovery, type SavedRecord } from './recovery.ts';
import { RecordTable } from './table.ts';

const writeOriginal = RecoveryDb.prototype.write;

afterEach(closeEngines);

describe('the journal', () => {
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

  test('while a large batch is sized, its records and bytes wait for every size, then go, 100 a transaction; other files are written meanwhile', async () => {
    const w = watchWrites();
    try {
      const { ferry, slice, advance, yields } = await steppedPage();
      const [earlier] = ferry.addFiles([{ data: file('earlier.bin', [9, 9]) }]) as [string];
      await advance(100);
      expect(w.perTransaction).toEqual([1]);
      expect(w.copies).toEqual([1]);
      const ids = ferry.addFiles(picked(PACED_ABOVE + 250));
      // Past recovery's look at the change and its throttle (20 ms here), over several paces.
      await advance(100);
      for (let i = 0; i < 5; i += 1) await slice();
      ferry.removeFiles([earlier]);
      await advance(600);
      // The other file's removal is written; nothing of the batch, neither records nor bytes.
      expect(w.perTransaction).toEqual([1, 0]);
      expect(w.copies).toEqual([1]);
      expect(ids.some((id) => w.written.has(id))).toBe(false);
      expect(ferry.getState().sizesPending).toBeGreaterThan(PACED_ABOVE);
      // Nor once no more than PACED_ABOVE sizes are pending (writes are no longer paced then).
      while (ferry.getState().sizesPending > PACED_ABOVE) await slice();
      await slice();
      await advance(300);
      expect(w.perTransaction).toEqual([1, 0]);
      expect(w.copies).toEqual([1]);
      // After the last size the batch goes, 100 a transaction, each record with its size.
      while (yields.length > 0) await slice();
      expect(ferry.getState().sizesPending).toBe(0);
      await advance(1000);
      // Each record once when the batch goes (again once its bytes are kept, as for any file).
      expect(ids.map((id) => w.written.get(id)?.[0])).toEqual(ids.map(() => 1));
      expect(w.copies.length).toBeGreaterThan(1);
      expect(w.copies.slice(1, -1).every((n) => n === 100)).toBe(true);
      await advance(1200);
      expect(ids.map((id) => w.written.get(id)?.at(-1))).toEqual(ids.map(() => 1));
      expect(w.copies.reduce((a, b) => a + b, 0)).toBe(1 + ids.length);
      expect(Math.max(...w.perTransaction)).toBeLessThanOrEqual(100);
    } finally {
      w.restore();
    }
  });

  test('a flush while a large batch is sized writes every record and copies the bytes sized so far at once', async () => {
    const w = watchWrites();
    try {
      const { ferry, slice, advance } = await steppedPage();
      ferry.addFiles(picked(PACED_ABOVE + 250));
      await advance(100);
      for (let i = 0; i < 5; i += 1) await slice();
      await advance(300);
      expect(w.copies).toEqual([]);
      expect(w.perTransaction).toEqual([]);
      const flushed = ferry.recovery?.flush();
      await advance(100);
      await flushed;
      // Every record (the sized ones with their sizes), and the bytes sized so far.
      expect(w.perTransaction.reduce((a, b) => a + b, 0)).toBe(PACED_ABOVE + 250);
      expect([...w.written.values()].filter(([size]) => size === 1)).toHaveLength(40);
      expect(w.copies).toEqual([40]);
      expect(ferry.getState().sizesPending).toBeGreaterThan(PACED_ABOVE);
    } finally {
      w.restore();
    }
  });

  test('a batch of up to PACED_ABOVE files is written at once while sized, 100 a transaction', async () => {
    const w = watchWrites();
    try {
      const { ferry, slice, advance, yields } = await steppedPage();
      const ids = ferry.addFiles(picked(250));
      await advance(100);
      // Not paced: the uploads that may follow at once would meet the held-back writes.
      expect(w.perTransaction).toEqual([100, 100, 50]);
      await slice();
      await advance(100);
      expect(w.copies).toEqual([8]);
      while (yields.length > 0) await slice();
      await advance(200);
      expect(ids.map((id) => w.written.get(id)?.at(-1))).toEqual(ids.map(() => 1));
    } finally {
      w.restore();
    }
  });

  test('records and copies take, per transaction, as many as were cloned in half a slice the last time', async () => {
    const w = watchWrites();
    // The clock moves only as values are cloned into a transaction: 0.1 ms each (a loaded machine).
    let clock = 0;
    const cloning = vi.spyOn(IDBObjectStore.prototype, 'put');
    const put = cloning.getMockImplementation();
    cloning.mockImplementation(function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      clock += 0.1;
      return (put as (this: IDBObjectStore, value: unknown, key?: IDBValidKey) => IDBRequest).call(this, value, key);
    });
    try {
      const { ferry } = await page(new IDBFactory(), { sizing: { now: () => clock } });
      const ids = ferry.addFiles(picked(250));
      await settle(ferry);
      await ferry.recovery?.flush();
      // 100 cloned took 10 ms: the next transactions take 40 (4 ms, half an 8 ms slice).
      expect(w.perTransaction[0]).toBe(100);
      expect(Math.max(...w.perTransaction.slice(1))).toBeLessThanOrEqual(40);
      expect(w.copies[0]).toBe(100);
      expect(Math.max(...w.copies.slice(1))).toBeLessThanOrEqual(40);
      expect(w.copies.reduce((a, b) => a + b, 0)).toBe(250);
      // Nothing left out: every record, with its size.
      expect(ids.map((id) => w.written.get(id)?.at(-1))).toEqual(ids.map(() => 1));
    } finally {
      w.restore();
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

describe('comparing the store', () => {
  test('a large batch just added is compared a slice a turn, not in one task; a flush compares the rest at once', async () => {
    vi.stubGlobal('MessageChannel', undefined); // turns are timeouts: one at a time under fake timers
    const listeners: ((state: FerryState) => void)[] = [];
    let clock = 0;
    let current: FerryState = initialState;
    const recovery = new Recovery(
      {
        scope: 'walk',
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
        // The engine's slices: 8 ms, on a clock that moves 1 ms each time it is read.
        slicing: { sliceMs: 8, now: () => (clock += 1) },
      },
      { indexedDB: new IDBFactory(), opfs: false },
    );
    const made = vi.spyOn(RecordTable.prototype, 'of');
    try {
      await recovery.start();
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const ids = Array.from({ length: 1000 }, (_, i) => `f${i}`);
      const files = Object.fromEntries(
        ids.map((id) => [id, { id, name: id, state: 'waiting', data: null, meta: {} } as unknown as FerryFile]),
      );
      current = { ...initialState, files, fileIds: ids };
      for (const l of listeners) l(current);
      expect(made).not.toHaveBeenCalled();
      // A record is made for each file as it is compared; each turn ends by asking for the next
      // (a timeout here): the records made between two such asks are one turn's, up to half.
      const asked: number[] = [];
      const fakeTimeout = globalThis.setTimeout;
      vi.stubGlobal('setTimeout', (fn: () => void, ms?: number) => {
        asked.push(made.mock.calls.length);
        return fakeTimeout(fn, ms);
      });
      while (made.mock.calls.length < 500) await vi.advanceTimersToNextTimerAsync();
      const perTurn = asked.slice(1).map((n, i) => n - (asked[i] as number));
      expect(Math.max(...perTurn)).toBeLessThanOrEqual(8);
      expect(perTurn.length).toBeGreaterThan(50);
      // A flush (before a deliberate reload) compares the rest at once and writes every record.
      expect((await recovery.stored()).records).toBe(1000);
    } finally {
      made.mockRestore();
      vi.useRealTimers();
      vi.unstubAllGlobals();
      recovery.stop();
    }
  });
});

/** `n` picked files of one byte each. */
const picked = (n: number) => Array.from({ length: n }, (_, i) => ({ data: file(`f${i}.bin`, [i % 256]) }));

/**
 * Watches recovery's IndexedDB writes: the size each record put wrote (by file id), the records
 * per transaction of the files store, and the copies of bytes per transaction.
 */
function watchWrites() {
  const written = new Map<string, (number | null)[]>();
  const perTransaction: number[] = [];
  const copies: number[] = [];
  const original = IDBObjectStore.prototype.put;
  const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
    this: IDBObjectStore,
    value: unknown,
    key?: IDBValidKey,
  ) {
    const record = (value as Partial<SavedRecord>).file;
    if (record && typeof key === 'string') written.set(key, [...(written.get(key) ?? []), record.size]);
    return original.call(this, value, key);
  });
  const write = vi.spyOn(RecoveryDb.prototype, 'write').mockImplementation(function (
    this: RecoveryDb,
    store,
    puts,
    deletes,
  ) {
    if (store === FILES) perTransaction.push(puts.length);
    if (store === BLOBS && puts.length > 0) copies.push(puts.length);
    return writeOriginal.call(this, store, puts, deletes);
  });
  return {
    written,
    perTransaction,
    copies,
    restore() {
      vi.useRealTimers();
      put.mockRestore();
      write.mockRestore();
    },
  };
}

/**
 * A page whose size slices run when the test says (`slice`), about 8 sizes each (8 ticks of a
 * clock read once per file), with fake timers from then on (`advance`); fake-indexeddb answers
 * on setImmediate, which stays real.
 */
async function steppedPage() {
  const yields: (() => void)[] = [];
  let clock = 0;
  const { ferry } = await page(new IDBFactory(), {
    sizing: { commitMs: 0, now: () => (clock += 1), yieldToMain: () => new Promise<void>((ok) => yields.push(ok)) },
  });
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const turns = async () => {
    for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
  };
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 10) {
      await vi.advanceTimersByTimeAsync(10);
      await turns();
    }
  };
  const slice = async () => {
    yields.shift()?.();
    await advance(10);
  };
  return { ferry, yields, slice, advance };
}
