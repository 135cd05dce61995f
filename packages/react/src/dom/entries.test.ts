import type { FileDescriptor } from '@ferry/core';
import { expect, describe as suite, test } from 'vitest';
import { FILE_REQUESTS, filesFromDataTransfer, walkDataTransfer } from './entries.ts';

type FakeEntry = Record<string, unknown>;

function fileEntry(path: string, body: string): FakeEntry {
  const name = path.split('/').pop() as string;
  return {
    isFile: true,
    isDirectory: false,
    name,
    fullPath: `/${path}`,
    file: (ok: (f: File) => void) => ok(new File([body], name)),
  };
}

/** A directory whose reader answers `batch` entries at a time, then an empty batch. */
function dirEntry(path: string, children: FakeEntry[], batch = 1): FakeEntry {
  return {
    isFile: false,
    isDirectory: true,
    name: path.split('/').pop(),
    fullPath: `/${path}`,
    createReader() {
      const rest = [...children];
      return { readEntries: (ok: (e: FakeEntry[]) => void) => ok(rest.splice(0, batch)) };
    },
  };
}

function transfer(entries: FakeEntry[], files: File[] = []): DataTransfer {
  return {
    items: entries.map((e) => ({ kind: 'file', webkitGetAsEntry: () => e })),
    files,
    types: ['Files'],
  } as unknown as DataTransfer;
}

suite('filesFromDataTransfer', () => {
  test('walks nested folders across readEntries batches and keeps relativePath', async () => {
    const tree = dirEntry('docs', [
      fileEntry('docs/a.txt', 'a'),
      dirEntry('docs/sub', [fileEntry('docs/sub/b.txt', 'bb'), dirEntry('docs/sub/empty', [])], 1),
      fileEntry('docs/c.txt', 'ccc'),
    ]);
    const out = await filesFromDataTransfer(transfer([tree, fileEntry('loose.txt', 'l')]));
    expect(out.map((d) => [d.name, d.relativePath, d.data?.size])).toEqual([
      ['a.txt', 'docs/a.txt', 1],
      ['b.txt', 'docs/sub/b.txt', 2],
      ['c.txt', 'docs/c.txt', 3],
      ['loose.txt', undefined, 1],
    ]);
  });

  test('falls back to the plain file list when entries are not available', async () => {
    const file = new File(['x'], 'x.bin');
    const dt = { items: [{ kind: 'file' }], files: [file], types: ['Files'] } as unknown as DataTransfer;
    const out = await filesFromDataTransfer(dt);
    expect(out).toEqual([{ data: file, name: 'x.bin', type: '', source: 'local', relativePath: undefined }]);
  });
});

/** A directory whose reader answers one batch per `release()`, as the test decides. */
function heldDir(path: string, batches: FakeEntry[][]) {
  const waiting: (() => void)[] = [];
  const entry: FakeEntry = {
    isFile: false,
    isDirectory: true,
    name: path,
    fullPath: `/${path}`,
    createReader() {
      const rest = [...batches];
      return {
        readEntries: (ok: (e: FakeEntry[]) => void) => waiting.push(() => ok(rest.shift() ?? [])),
      };
    },
  };
  const release = async () => {
    waiting.shift()?.();
    for (let i = 0; i < 5; i += 1) await Promise.resolve();
  };
  return { entry, release };
}

suite('walkDataTransfer', () => {
  test("a folder's files are handed over batch by batch, before the rest of the folder is read", async () => {
    const names = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => fileEntry(`big/f${from + i}.txt`, 'x'));
    const dir = heldDir('big', [names(3, 0), names(2, 3)]);
    const parts: string[][] = [];
    const sink = (files: FileDescriptor[]) => parts.push(files.map((f) => f.relativePath ?? ''));
    const done = walkDataTransfer(transfer([dir.entry]), sink);
    await dir.release();
    // The first batch is out while the folder's next batch has not been answered yet.
    expect(parts).toEqual([['big/f0.txt', 'big/f1.txt', 'big/f2.txt']]);
    await dir.release();
    await dir.release();
    await done;
    expect(parts).toEqual([
      ['big/f0.txt', 'big/f1.txt', 'big/f2.txt'],
      ['big/f3.txt', 'big/f4.txt'],
    ]);
  });

  test('subfolders keep their place in the order of the listing', async () => {
    const tree = dirEntry(
      'd',
      [fileEntry('d/a.txt', 'a'), dirEntry('d/s', [fileEntry('d/s/b.txt', 'b')]), fileEntry('d/c.txt', 'c')],
      3,
    );
    const parts: string[][] = [];
    await walkDataTransfer(transfer([tree]), (files) => parts.push(files.map((f) => f.name ?? '')));
    expect(parts).toEqual([['a.txt'], ['b.txt'], ['c.txt']]);
  });

  test('a few file() calls are in flight at once, never a whole batch', async () => {
    let inFlight = 0;
    let most = 0;
    const entries = Array.from({ length: 50 }, (_, i) => ({
      ...fileEntry(`big/f${i}.txt`, 'x'),
      file: (ok: (f: File) => void) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        setTimeout(() => {
          inFlight -= 1;
          ok(new File(['x'], `f${i}.txt`));
        }, 0);
      },
    }));
    const out = await filesFromDataTransfer(transfer([dirEntry('big', entries, 50)]));
    expect(out).toHaveLength(50);
    // Chromium takes piled-up answers in one task, each with a synchronous call to the browser.
    expect(most).toBe(FILE_REQUESTS);
  });
});
