/** Restoring after a reload (`recovery.ts`): what comes back, how, and what starts again. */
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, describe, expect, test } from 'vitest';
import {
  bytesOf,
  closeEngines,
  engines,
  file,
  freshFerry,
  ManualUploader,
  names,
  offline,
  page,
  settle,
} from '../test/recovery-page.ts';

afterEach(closeEngines);

describe('restoring after a reload', () => {
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
});
