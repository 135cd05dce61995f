/**
 * One file: thumbnail, name, size, state, progress, processed results, and its actions (pause,
 * retry, edit, remove, result links). An import waiting out its provider's rate limit says so,
 * counting down ("Waiting for Dropbox… retrying in 12 s"), in a live region that tells each wait once.
 */
import type { FerryFile } from '@ferry/core';
import { memo } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { processingPercent } from '../processing.ts';
import { FileSize } from './FileSize.tsx';
import { icons } from './icons.tsx';
import { ProcessedResults } from './ProcessedResults.tsx';
import { ResultLinks } from './ResultLinks.tsx';
import { Thumbnail } from './Thumbnail.tsx';

export interface FileRowProps {
  id: string;
  /** Opens the file card (meta editor and error detail). */
  onEdit?(id: string): void;
  /** Once uploaded, offer to open the stored file and copy its link. */
  resultLinks?: boolean;
  style?: React.CSSProperties;
  index?: number;
  setSize?: number;
}

const ACTIVE = new Set(['uploading', 'preprocessing', 'postprocessing']);

function stateText(file: FerryFile, t: (k: string) => string): string {
  if (file.ghost) return t('addAgainToResume');
  if (file.state === 'error') return file.error?.message ?? t('error');
  if (file.state === 'preprocessing' && file.progress.preprocess) return file.progress.preprocess.message;
  if (file.state === 'postprocessing' && file.progress.postprocess) {
    const pct = processingPercent(file);
    return pct === undefined ? file.progress.postprocess.message : `${file.progress.postprocess.message}: ${pct}%`;
  }
  if (file.state === 'uploading') return `${Math.round(file.progress.percentage)}%`;
  return t(file.state);
}

export const FileRow = memo(function FileRow({ id, onEdit, resultLinks, style, index, setSize }: FileRowProps) {
  const ferry = useFerry();
  const t = useI18n();
  const file = useFerryState((s) => s.files[id]);
  if (!file) return null;
  const active = ACTIVE.has(file.state);
  const canPause = (file.state === 'uploading' || file.state === 'paused') && !file.ghost;
  const folder = file.relativePath?.includes('/') ? file.relativePath.slice(0, file.relativePath.lastIndexOf('/')) : '';
  // Only while it runs: a record restored after a reload may still carry an old wait.
  const waiting = file.state === 'uploading' && file.waiting ? file.waiting : null;
  const provider = waiting ? ferry.providers.info(file.remote?.providerName ?? file.source).name : '';
  return (
    <li
      className="ferry-file"
      data-state={file.state}
      data-ghost={file.ghost || undefined}
      data-testid="ferry-file"
      style={style}
      aria-posinset={index === undefined ? undefined : index + 1}
      aria-setsize={setSize}
    >
      <Thumbnail id={id} />
      <span className="ferry-file-main">
        <span className="ferry-file-name" title={file.relativePath ?? file.name}>
          {file.name}
        </span>
        <span className="ferry-file-meta">
          <FileSize file={file} />
          {folder && <span className="ferry-file-path"> · {folder}</span>}
          {' · '}
          <span className="ferry-file-state" title={file.error?.details ?? file.error?.message}>
            {waiting ? t('waitingFor', { provider, seconds: waiting.seconds }) : stateText(file, t)}
          </span>
          <span className="ferry-visually-hidden" aria-live="polite" aria-atomic="true">
            {waiting ? t('waitingFor', { provider, seconds: waiting.retryAfter }) : ''}
          </span>
        </span>
        <progress
          className="ferry-file-progress"
          max={100}
          // While processing: the service's figure, or no value (an indeterminate bar) without one.
          value={file.state === 'postprocessing' ? processingPercent(file) : file.progress.percentage}
          aria-label={t('fileProgress', { file: file.name })}
          hidden={file.state === 'waiting' || file.state === 'complete'}
        />
        {file.state === 'complete' && file.results && <ProcessedResults results={file.results} />}
      </span>
      <span className="ferry-file-actions">
        {resultLinks && file.state === 'complete' && file.uploadURL && (
          <ResultLinks url={file.uploadURL} name={file.name} />
        )}
        {canPause && (
          <button
            type="button"
            className="ferry-icon-button"
            onClick={() => ferry.pauseResume(id)}
            aria-label={`${t(file.isPaused ? 'resumeUpload' : 'pauseUpload')} ${file.name}`}
            title={t(file.isPaused ? 'resumeUpload' : 'pauseUpload')}
          >
            {file.isPaused ? icons.play : icons.pause}
          </button>
        )}
        {file.state === 'error' && (
          <button
            type="button"
            className="ferry-icon-button"
            onClick={() => void ferry.retryUpload(id)}
            aria-label={`${t('retryUpload')} ${file.name}`}
            title={t('retryUpload')}
          >
            {icons.retry}
          </button>
        )}
        {onEdit && !active && (
          <button
            type="button"
            className="ferry-icon-button"
            onClick={() => onEdit(id)}
            aria-label={`${t(file.state === 'error' ? 'details' : 'editFile')} ${file.name}`}
            title={t(file.state === 'error' ? 'details' : 'editFile')}
          >
            {icons.edit}
          </button>
        )}
        {file.state !== 'complete' && (
          <button
            type="button"
            className="ferry-icon-button"
            onClick={() => ferry.removeFile(id)}
            aria-label={`${t('removeFile')} ${file.name}`}
            title={t('removeFile')}
          >
            {icons.close}
          </button>
        )}
      </span>
    </li>
  );
});
