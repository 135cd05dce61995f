/** The files, virtualised: only the rows in view are in the DOM, so 10,000 files scroll smoothly. */
import { useRef } from 'react';
import { useFerryState } from '../context.tsx';
import { useVirtualList } from '../hooks/useVirtualList.ts';
import { useI18n } from '../i18n.ts';
import { FileRow } from './FileRow.tsx';

export const ROW_HEIGHT = 64;

export interface FileListProps {
  onEdit?(id: string): void;
  /** Links to each uploaded file (open, copy link). */
  resultLinks?: boolean;
  rowHeight?: number;
}

export function FileList({ onEdit, resultLinks, rowHeight = ROW_HEIGHT }: FileListProps) {
  const t = useI18n();
  const ids = useFerryState((s) => s.fileIds);
  const scroller = useRef<HTMLDivElement>(null);
  const range = useVirtualList(scroller, ids.length, rowHeight);
  return (
    <div className="ferry-files-scroll" ref={scroller} data-testid="ferry-files">
      <ul
        className="ferry-files"
        aria-label={t('filesList')}
        style={{ paddingTop: range.before, paddingBottom: range.after }}
      >
        {ids.slice(range.start, range.end).map((id, i) => (
          <FileRow
            key={id}
            id={id}
            onEdit={onEdit}
            resultLinks={resultLinks}
            index={range.start + i}
            setSize={ids.length}
            style={{ height: rowHeight }}
          />
        ))}
      </ul>
    </div>
  );
}
