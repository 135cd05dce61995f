/**
 * A button that opens the file picker (or the folder picker with `directory`) and adds the picks.
 * With `fileSystemAccess`, where the browser has `showOpenFilePicker`, files are picked through
 * it and keep their handles (recovery then needs no copy of their bytes).
 */
import type { FileDescriptor, FileHandleLike } from '@ferry/core';
import { type ReactNode, useId } from 'react';
import { useFerry } from '../context.tsx';
import { describe } from '../dom/entries.ts';

export interface FileInputProps {
  /** Pick a whole folder (webkitdirectory); files keep their `relativePath`. */
  directory?: boolean;
  accept?: string;
  multiple?: boolean;
  className?: string;
  /** Pick through the File System Access API when the browser has it (files only). */
  fileSystemAccess?: boolean;
  children: ReactNode;
}

interface PickerWindow {
  showOpenFilePicker?(options: { multiple?: boolean }): Promise<FileHandleLike[]>;
}

/** Files picked through `showOpenFilePicker`, with their handles; null when the picker is missing. */
async function pickWithHandles(multiple: boolean): Promise<FileDescriptor[] | null> {
  const picker = (window as PickerWindow).showOpenFilePicker;
  if (!picker) return null;
  try {
    const handles = await picker.call(window, { multiple });
    return Promise.all(handles.map(async (handle) => ({ ...describe(await handle.getFile()), handle })));
  } catch (error) {
    // The person closed the picker.
    if ((error as DOMException).name === 'AbortError') return [];
    return null;
  }
}

export function FileInput({
  directory,
  accept,
  multiple = true,
  className = 'ferry-browse',
  fileSystemAccess = false,
  children,
}: FileInputProps) {
  const ferry = useFerry();
  const id = useId();
  const folderProps = directory ? ({ webkitdirectory: '', directory: '' } as Record<string, string>) : {};
  return (
    <>
      <input
        id={id}
        className="ferry-visually-hidden"
        type="file"
        tabIndex={-1}
        aria-label={typeof children === 'string' ? children : undefined}
        multiple={multiple}
        accept={accept}
        data-directory={directory ? '' : undefined}
        {...folderProps}
        onChange={(e) => {
          const list = e.currentTarget.files;
          if (list && list.length > 0) ferry.addFiles(Array.from(list, (f) => describe(f)));
          // Clear it so picking the same file again fires change.
          e.currentTarget.value = '';
        }}
      />
      <button
        type="button"
        className={className}
        onClick={(e) => {
          const input = e.currentTarget.previousElementSibling as HTMLInputElement | null;
          if (!fileSystemAccess || directory || !(window as PickerWindow).showOpenFilePicker) return input?.click();
          void pickWithHandles(multiple).then((picked) => {
            if (picked === null) input?.click();
            else if (picked.length > 0) ferry.addFiles(picked);
          });
        }}
      >
        {children}
      </button>
    </>
  );
}
