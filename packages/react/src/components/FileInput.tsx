/** A button that opens the file picker (or the folder picker with `directory`) and adds the picks. */
import { type ReactNode, useId } from 'react';
import { useFerry } from '../context.tsx';
import { describe } from '../dom/entries.ts';

export interface FileInputProps {
  /** Pick a whole folder (webkitdirectory); files keep their `relativePath`. */
  directory?: boolean;
  accept?: string;
  multiple?: boolean;
  className?: string;
  children: ReactNode;
}

export function FileInput({
  directory,
  accept,
  multiple = true,
  className = 'ferry-browse',
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
        onClick={(e) => (e.currentTarget.previousElementSibling as HTMLInputElement | null)?.click()}
      >
        {children}
      </button>
    </>
  );
}
