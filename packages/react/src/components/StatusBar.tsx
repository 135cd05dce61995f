/**
 * Total progress, bytes of total, smoothed speed and time left, and the action that fits the
 * overall state: waiting, preprocessing, uploading, paused, postprocessing, complete or error.
 */
import { type FerryState, formatSize } from '@ferry/core';
import { useEffect, useRef, useState } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { batchProcessingPercent } from '../processing.ts';
import { createSpeedEstimator, formatDuration } from '../speed.ts';
import { StatusErrors } from './StatusErrors.tsx';

export type OverallState =
  | 'empty'
  | 'waiting'
  | 'preprocessing'
  | 'uploading'
  | 'paused'
  | 'postprocessing'
  | 'complete'
  | 'error';

/** How many files are in each state (the engine keeps them: `FerryState.counts`). */
export type Counts = FerryState['counts'];

/**
 * The one state the bar shows for a mix of file states. `ghosts` of the paused files are ghosts
 * (`FerryState.ghosts`): they wait for the person to add their files again, so they hold no other
 * file back, and the bar shows them paused only when nothing else is to be done.
 */
export function overallState(c: Counts, ghosts = 0): OverallState {
  const all = c.waiting + c.preprocessing + c.uploading + c.postprocessing + c.paused + c.complete + c.error;
  if (all === 0) return 'empty';
  if (c.uploading > 0) return 'uploading';
  if (c.preprocessing > 0) return 'preprocessing';
  if (c.postprocessing > 0) return 'postprocessing';
  if (c.paused > ghosts) return 'paused';
  if (c.waiting > 0) return 'waiting';
  if (c.error > 0) return 'error';
  if (ghosts > 0) return 'paused';
  return 'complete';
}

export interface StatusBarProps {
  /** The Done button (complete state); hidden when not given. */
  onDone?(): void;
  /** List failed files with their errors and a Retry each, behind a toggle (default true). */
  showErrors?: boolean;
}

export function StatusBar({ onDone, showErrors = true }: StatusBarProps) {
  const ferry = useFerry();
  const t = useI18n();
  const counts = useFerryState((s) => s.counts);
  const ghosts = useFerryState((s) => s.ghosts);
  const total = useFerryState((s) => s.totalProgress);
  const uploaded = useFerryState((s) => s.totals?.bytesUploaded ?? 0);
  const bytesTotal = useFerryState((s) => s.totals?.bytesTotal ?? 0);
  // Sizes of a large batch are still being read: upload() would wait for them, so the button does.
  const sizing = useFerryState((s) => (s.sizesPending ?? 0) > 0);
  const processing = useFerryState((s) => batchProcessingPercent(s));
  const state = overallState(counts, ghosts);
  const speed = useSmoothedSpeed(uploaded, state === 'uploading');
  if (state === 'empty') return null;

  // While processing, the bar follows the service's figure; without one it is indeterminate.
  const pct = state === 'complete' ? 100 : state === 'postprocessing' ? processing : Math.round(total);
  let label: string;
  if (state === 'uploading') label = `${t('uploading')}: ${pct}%`;
  else if (state === 'preprocessing') label = t('preprocessing');
  else if (state === 'postprocessing')
    label = pct === undefined ? t('postprocessing') : `${t('postprocessing')}: ${pct}%`;
  else if (state === 'paused') label = `${t('paused')}: ${pct}%`;
  else if (state === 'waiting') label = t('xFilesSelected', { smart_count: counts.waiting });
  else if (state === 'error') label = t('xFilesFailed', { smart_count: counts.error });
  else label = t('complete');

  const eta = speed.eta(Math.max(0, bytesTotal - uploaded));
  const showDetails = state === 'uploading' || state === 'paused';
  const button = (key: string, onClick: () => void, primary = false, waiting = false) => (
    <button
      type="button"
      className={`ferry-button${primary ? ' ferry-primary' : ''}`}
      onClick={onClick}
      disabled={waiting || undefined}
      aria-busy={waiting || undefined}
      data-testid={waiting ? 'ferry-upload-waiting' : undefined}
    >
      {key}
    </button>
  );

  return (
    <div className="ferry-status" data-state={state}>
      <div
        className="ferry-status-progress"
        role="progressbar"
        aria-label={t('totalProgress')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        data-indeterminate={pct === undefined || undefined}
      >
        <div className="ferry-status-fill" style={{ transform: `scaleX(${(pct ?? 100) / 100})` }} />
      </div>
      <div className="ferry-status-text" role="status" aria-live="polite">
        <span className="ferry-status-label" data-testid="ferry-status">
          {label}
        </span>
        {showDetails && (
          <span className="ferry-status-details">
            {t('dataUploadedOfTotal', { complete: formatSize(uploaded), total: formatSize(bytesTotal) })}
            {state === 'uploading' && speed.speed() > 0 && (
              <>
                {' · '}
                {t('uploadSpeed', { speed: formatSize(Math.round(speed.speed())) })}
                {eta !== null && ` · ${t('xTimeLeft', { time: formatDuration(eta) })}`}
              </>
            )}
          </span>
        )}
      </div>
      <div className="ferry-status-actions">
        {state === 'waiting' &&
          button(t('uploadXFiles', { smart_count: counts.waiting }), () => void ferry.upload(), true, sizing)}
        {state === 'uploading' && button(t('pauseAll'), () => ferry.pauseAll())}
        {state === 'paused' && button(t('resumeAll'), () => ferry.resumeAll(), true)}
        {state === 'error' && button(t('retryAll'), () => void ferry.retryAll(), true)}
        {(state === 'uploading' || state === 'paused' || state === 'preprocessing' || state === 'error') &&
          button(t('cancel'), () => ferry.cancelAll())}
        {state === 'complete' && onDone && button(t('done'), onDone, true)}
      </div>
      {showErrors && counts.error > 0 && <StatusErrors />}
    </div>
  );
}

/** Feeds byte totals into a smoothed estimator once a second while uploading. */
function useSmoothedSpeed(uploaded: number, active: boolean) {
  const [estimator] = useState(() => createSpeedEstimator());
  const latest = useRef(uploaded);
  latest.current = uploaded;
  const [, tick] = useState(0);
  useEffect(() => {
    if (!active) {
      estimator.reset();
      return;
    }
    estimator.sample(performance.now(), latest.current);
    const timer = setInterval(() => {
      estimator.sample(performance.now(), latest.current);
      tick((n) => n + 1);
    }, 1000);
    return () => clearInterval(timer);
  }, [active, estimator]);
  return estimator;
}
