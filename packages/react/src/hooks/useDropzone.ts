/** React prop getters over {@link createDropzone}: spread `getRootProps()` on the drop target. */
import type { FileDescriptor } from '@ferry/core';
import { type DragEvent, type HTMLAttributes, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { createDropzone, type Dropzone } from '../dom/dropzone.ts';

export interface UseDropzoneOptions {
  /** Where dropped files go; by default `ferry.addFiles`. */
  onFiles?(files: FileDescriptor[]): void;
  /**
   * Hand a dropped folder's files over part by part as they are read (see
   * `DropzoneOptions.progressive`). Default: on when the files go to `ferry.addFiles`, off when
   * `onFiles` is given (it is then called once per drop, as before).
   */
  progressive?: boolean;
  disabled?: boolean;
}

export interface UseDropzone {
  isDragActive: boolean;
  getRootProps<T extends HTMLAttributes<HTMLElement>>(props?: T): T & HTMLAttributes<HTMLElement>;
}

type Handler = (event: DragEvent<HTMLElement>) => void;

function chain(own: Handler, theirs?: Handler): Handler {
  return (event) => {
    theirs?.(event);
    own(event);
  };
}

export function useDropzone(options: UseDropzoneOptions = {}): UseDropzone {
  const ferry = useFerry();
  const [isDragActive, setActive] = useState(false);
  const ref = useRef<Dropzone | null>(null);
  const current = {
    onFiles: options.onFiles ?? ((files: FileDescriptor[]) => ferry.addFiles(files)),
    progressive: options.progressive ?? options.onFiles === undefined,
    onDragChange: setActive,
    disabled: options.disabled,
  };
  if (!ref.current) ref.current = createDropzone(current);
  else ref.current.setOptions(current);
  const zone = ref.current;

  return {
    isDragActive,
    getRootProps(props) {
      const p = (props ?? {}) as HTMLAttributes<HTMLElement>;
      return {
        ...p,
        onDragEnter: chain((e) => zone.onDragEnter(e), p.onDragEnter),
        onDragOver: chain((e) => zone.onDragOver(e), p.onDragOver),
        onDragLeave: chain((e) => zone.onDragLeave(e), p.onDragLeave),
        onDrop: chain((e) => void zone.onDrop(e), p.onDrop),
      } as typeof props & HTMLAttributes<HTMLElement>;
    },
  };
}
