/**
 * The status bar's per-file errors: a toggle that lists each failed file with its error and its
 * own Retry, so one failure among many can be read and retried without opening every card.
 */
import type { FerryState } from '@ferry/core';
import { useId, useState } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';

/**
 * Failed ids as one string, so the selector compares by value. It runs on every state change:
 * with no failed file (the engine's counts say so in O(1)) it skips the walk over every file.
 */
const failedKey = (s: FerryState) =>
  s.counts?.error === 0 ? '' : s.fileIds.filter((id) => s.files[id]?.state === 'error').join('\n');

export function StatusErrors() {
  const t = useI18n();
  const key = useFerryState(failedKey);
  const [open, setOpen] = useState(false);
  const listId = useId();
  if (key === '') return null;
  return (
    <>
      <button
        type="button"
        className="ferry-button ferry-status-errors-toggle"
        aria-expanded={open}
        aria-controls={listId}
        onClick={() => setOpen(!open)}
      >
        {t(open ? 'hideErrors' : 'showErrors')}
      </button>
      {open && (
        <ul className="ferry-status-errors" id={listId} aria-label={t('failedFiles')}>
          {key.split('\n').map((id) => (
            <FailedFile key={id} id={id} />
          ))}
        </ul>
      )}
    </>
  );
}

function FailedFile({ id }: { id: string }) {
  const ferry = useFerry();
  const t = useI18n();
  const file = useFerryState((s) => s.files[id]);
  if (!file) return null;
  return (
    <li className="ferry-status-error" data-testid="ferry-status-error">
      <span className="ferry-status-error-text">
        <strong>{file.name}</strong>: {file.error?.message ?? t('error')}
        {file.error?.details && <span className="ferry-status-error-details"> · {file.error.details}</span>}
      </span>
      <button
        type="button"
        className="ferry-button"
        onClick={() => void ferry.retryUpload(id)}
        aria-label={`${t('retryUpload')} ${file.name}`}
      >
        {t('retry')}
      </button>
    </li>
  );
}
