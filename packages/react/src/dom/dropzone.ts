/**
 * A framework-free drop target: tracks whether files are dragged over it (with a counter, because
 * dragenter/dragleave fire for every child), and hands the dropped files, folders walked, to
 * `onFiles`. `useDropzone` wraps it in React prop getters; other frameworks can bind it directly.
 */
import type { FileDescriptor } from '@ferry/core';
import { filesFromDataTransfer, hasFiles } from './entries.ts';

export interface DropzoneOptions {
  onFiles(files: FileDescriptor[]): void;
  /** Called when the "files are over me" flag changes, for the drop hint. */
  onDragChange?(over: boolean): void;
  disabled?: boolean;
}

/** The subset of a DOM DragEvent the handlers read (React's synthetic events have it too). */
export interface DragLike {
  dataTransfer: DataTransfer | null;
  preventDefault(): void;
  stopPropagation(): void;
}

export interface Dropzone {
  onDragEnter(event: DragLike): void;
  onDragOver(event: DragLike): void;
  onDragLeave(event: DragLike): void;
  onDrop(event: DragLike): Promise<void>;
  isOver(): boolean;
  setOptions(options: DropzoneOptions): void;
}

export function createDropzone(initial: DropzoneOptions): Dropzone {
  let options = initial;
  let depth = 0;
  const set = (next: number) => {
    const was = depth > 0;
    depth = Math.max(0, next);
    if (was !== depth > 0) options.onDragChange?.(depth > 0);
  };
  return {
    onDragEnter(event) {
      if (options.disabled || !hasFiles(event.dataTransfer)) return;
      event.preventDefault();
      set(depth + 1);
    },
    onDragOver(event) {
      if (options.disabled || !hasFiles(event.dataTransfer)) return;
      // Without preventDefault the browser refuses the drop.
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
      if (depth === 0) set(1);
    },
    onDragLeave(event) {
      if (options.disabled || depth === 0) return;
      event.preventDefault();
      set(depth - 1);
    },
    async onDrop(event) {
      if (options.disabled) return;
      event.preventDefault();
      event.stopPropagation();
      set(0);
      if (!event.dataTransfer) return;
      const files = await filesFromDataTransfer(event.dataTransfer);
      if (files.length > 0) options.onFiles(files);
    },
    isOver: () => depth > 0,
    setOptions(next) {
      options = next;
    },
  };
}
