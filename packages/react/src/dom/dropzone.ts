/**
 * A framework-free drop target: tracks whether files are dragged over it (with a counter, because
 * dragenter/dragleave fire for every child), and hands the dropped files, folders walked, to
 * `onFiles`. `useDropzone` wraps it in React prop getters; other frameworks can bind it directly.
 */
import type { FileDescriptor } from '@ferry/core';
import { filesFromDataTransfer, hasFiles, walkDataTransfer } from './entries.ts';
import { createParts } from './parts.ts';

export interface DropzoneOptions {
  /** The dropped files: once per drop, or part by part with `progressive`. */
  onFiles(files: FileDescriptor[]): void;
  /**
   * Hand a dropped folder's files over as they are read (the first part at once, then parts
   * 100 ms apart, further apart as files pile up: `parts.ts`) instead of once at the end: reading a folder of 10,000 files takes seconds in
   * Chromium (one round trip per file), and its first rows should not wait for the last file.
   * `onFiles` is then called several times per drop. Off by default.
   */
  progressive?: boolean;
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
      // Options read at the drop: a new onFiles given during the walk gets the parts after it.
      if (options.progressive) {
        const parts = createParts((files) => options.onFiles(files));
        await walkDataTransfer(event.dataTransfer, (files) => parts.push(files));
        parts.flush();
        return;
      }
      const files = await filesFromDataTransfer(event.dataTransfer);
      if (files.length > 0) options.onFiles(files);
    },
    isOver: () => depth > 0,
    setOptions(next) {
      options = next;
    },
  };
}
