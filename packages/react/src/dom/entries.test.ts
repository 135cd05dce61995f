import { expect, describe as suite, test } from 'vitest';
import { filesFromDataTransfer } from './entries.ts';

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
