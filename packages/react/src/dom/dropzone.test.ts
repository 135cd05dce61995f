import type { FileDescriptor } from '@ferry/core';
import { expect, test, vi } from 'vitest';
import { createDropzone, type DragLike } from './dropzone.ts';

const files = [new File(['hi'], 'hi.txt', { type: 'text/plain' })];
const drag = (types: string[] = ['Files']): DragLike & { prevented: boolean } => {
  const e = {
    prevented: false,
    dataTransfer: { types, items: [], files, dropEffect: 'none' } as unknown as DataTransfer,
    preventDefault() {
      e.prevented = true;
    },
    stopPropagation() {},
  };
  return e;
};

test('nested dragenter/dragleave keep the hint until the drag really leaves', () => {
  const changes: boolean[] = [];
  const zone = createDropzone({ onFiles: () => {}, onDragChange: (over) => changes.push(over) });
  zone.onDragEnter(drag());
  zone.onDragEnter(drag()); // entering a child
  zone.onDragLeave(drag()); // leaving the child
  expect(zone.isOver()).toBe(true);
  zone.onDragLeave(drag());
  expect(zone.isOver()).toBe(false);
  expect(changes).toEqual([true, false]);
});

test('drags of text are ignored; a drop hands the files over and clears the hint', async () => {
  const onFiles = vi.fn<(f: FileDescriptor[]) => void>();
  const zone = createDropzone({ onFiles });
  const text = drag(['text/plain']);
  zone.onDragOver(text);
  expect(text.prevented).toBe(false);
  const over = drag();
  zone.onDragOver(over);
  expect(over.prevented).toBe(true);
  await zone.onDrop(drag());
  expect(zone.isOver()).toBe(false);
  expect(onFiles).toHaveBeenCalledWith([
    { data: files[0], name: 'hi.txt', type: 'text/plain', source: 'local', relativePath: undefined },
  ]);
});

test('a disabled zone neither accepts nor reports', async () => {
  const onFiles = vi.fn();
  const zone = createDropzone({ onFiles, disabled: true });
  const over = drag();
  zone.onDragOver(over);
  await zone.onDrop(drag());
  expect(over.prevented).toBe(false);
  expect(onFiles).not.toHaveBeenCalled();
});

/** A drop of one folder whose reader answers one batch of files per `release()`. */
function folderDrop(batches: string[][]) {
  const waiting: (() => void)[] = [];
  const rest = batches.map((b) =>
    b.map((name) => ({
      isFile: true,
      isDirectory: false,
      name,
      fullPath: `/dir/${name}`,
      file: (ok: (f: File) => void) => ok(new File(['x'], name)),
    })),
  );
  const dir = {
    isFile: false,
    isDirectory: true,
    name: 'dir',
    fullPath: '/dir',
    createReader: () => ({ readEntries: (ok: (e: unknown[]) => void) => waiting.push(() => ok(rest.shift() ?? [])) }),
  };
  const event: DragLike = {
    dataTransfer: { types: ['Files'], items: [{ kind: 'file', webkitGetAsEntry: () => dir }], files: [] } as never,
    preventDefault() {},
    stopPropagation() {},
  };
  const release = async () => {
    waiting.shift()?.();
    for (let i = 0; i < 5; i += 1) await Promise.resolve();
  };
  return { event, release };
}

test('progressive: a dropped folder is handed over part by part while it is read', async () => {
  const parts: string[][] = [];
  const zone = createDropzone({ onFiles: (f) => parts.push(f.map((d) => d.name ?? '')), progressive: true });
  const drop = folderDrop([['a', 'b'], ['c']]);
  const done = zone.onDrop(drop.event);
  await drop.release();
  expect(parts).toEqual([['a', 'b']]);
  await drop.release();
  await drop.release();
  await done;
  expect(parts).toEqual([['a', 'b'], ['c']]);
});

test('without progressive, onFiles gets a dropped folder once, whole', async () => {
  const parts: string[][] = [];
  const zone = createDropzone({ onFiles: (f) => parts.push(f.map((d) => d.name ?? '')) });
  const drop = folderDrop([['a', 'b'], ['c']]);
  const done = zone.onDrop(drop.event);
  for (let i = 0; i < 3; i += 1) await drop.release();
  await done;
  expect(parts).toEqual([['a', 'b', 'c']]);
});
