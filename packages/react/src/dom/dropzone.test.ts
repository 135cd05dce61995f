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
