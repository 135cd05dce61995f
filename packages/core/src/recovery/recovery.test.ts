import { IDBFactory } from 'fake-indexeddb';
import { afterEach, describe, expect, test } from 'vitest';
import { Ferry } from '../ferry.ts';
import { initialState } from '../reducer.ts';
import type { FerryFile, FerryState } from '../types.ts';
import type { UploadContext, Uploader, UploadResult } from '../uploader.ts';
import { Recovery } from './recovery.ts';

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
async function page(db: IDBFactory, options: { id?: string; maxCopySize?: number } = {}) {
  const uploader = new ManualUploader();
  const ferry = new Ferry({
    id: options.id,
    uploader,
    online: offline,
    recovery: { indexedDB: db, opfs: false, throttle: 20, maxCopySize: options.maxCopySize },
  });
  engines.push(ferry);
  await settle(ferry);
  return { ferry, uploader };
}

/** Lets recovery read the records back (start) and finish its writes. */
async function settle(ferry: Ferry) {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setTimeout(r, 5));
  await ferry.recovery?.flush();
}

const file = (name: string, bytes: number[], lastModified = 1_700_000_000_000) =>
  new File([new Uint8Array(bytes)], name, { type: 'application/octet-stream', lastModified });

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
    const g = globalThis as { navigator?: { storage?: unknown } };
    const hadNavigator = g.navigator !== undefined;
    g.navigator ??= {};
    const nav = g.navigator;
    const before = Object.getOwnPropertyDescriptor(nav, 'storage');
    Object.defineProperty(nav, 'storage', { value: storage, configurable: true });
    try {
      const make = () =>
        new Ferry({ uploader: new ManualUploader(), online: offline, recovery: { indexedDB: db, throttle: 5 } });
      const first = make();
      engines.push(first);
      const id = first.addFile({ data: file('q.bin', [1]) });
      await settle(first);
      expect(first.getFile(id as string)?.state).toBe('waiting');
      first.destroy();
      const second = make();
      engines.push(second);
      await settle(second);
      expect(second.getFile(id as string)?.ghost).toBe(true);
    } finally {
      if (before) Object.defineProperty(nav, 'storage', before);
      else delete nav.storage;
      if (!hadNavigator) delete g.navigator;
    }
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
    const g = globalThis as { navigator?: { storage?: unknown } };
    const hadNavigator = g.navigator !== undefined;
    g.navigator ??= {};
    const nav = g.navigator;
    const before = Object.getOwnPropertyDescriptor(nav, 'storage');
    Object.defineProperty(nav, 'storage', { value: { getDirectory: async () => dir }, configurable: true });
    try {
      const uploader = new ManualUploader();
      const ferry = new Ferry({ uploader, online: offline, recovery: { indexedDB: db, throttle: 5 } });
      engines.push(ferry);
      await settle(ferry);
      ferry.addFiles([1, 2, 3, 4].map((n) => ({ data: file(`s${n}.bin`, [n]) })));
      void ferry.upload();
      while (uploader.calls.length < 4) await new Promise((r) => setTimeout(r, 0));
      // Three finish at once; the fourth is still uploading, so the batch's records stay.
      for (const call of uploader.calls.slice(0, 3)) call.resolve({});
      await settle(ferry);
      await new Promise((r) => setTimeout(r, 300));
      expect(ferry.getFiles().map((f) => f.state)).toEqual(['complete', 'complete', 'complete', 'uploading']);
      // The copy already under way when they finished, and the fourth file's; never the others.
      expect(writes).toBeLessThanOrEqual(2);
    } finally {
      if (before) Object.defineProperty(nav, 'storage', before);
      else delete nav.storage;
      if (!hadNavigator) delete g.navigator;
    }
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
    await new Promise((r) => setTimeout(r, 5));
    // ...then one diff of the last state.
    expect(walks).toBe(1);
    await recovery.flush();
    recovery.stop();
  });
});
