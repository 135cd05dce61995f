/** A file's size, or a placeholder while it is still being read (large batches: see @ferry/core `sizing.ts`). */
import { type FerryFile, formatSize } from '@ferry/core';

export function FileSize({ file }: { file: Pick<FerryFile, 'size' | 'sizePending'> }) {
  if (file.sizePending) {
    return (
      <span className="ferry-file-size" data-pending="" aria-busy="true">
        …
      </span>
    );
  }
  return <span className="ferry-file-size">{formatSize(file.size)}</span>;
}
