/**
 * How far processing is, for the bars: a file's postprocessing progress as a percentage when the
 * service reports one (a `determinate` progress, e.g. an Assembly's `progress_combined`), and
 * the batch's as the mean over the files still processing, known only when every one of them
 * reports a value (one file without a figure makes the bar indeterminate, never a made-up mean).
 */
import type { FerryFile, FerryState } from '@ferry/core';

/** `file`'s processing progress 0..100, undefined when it is not processing or has no figure. */
export function processingPercent(file: FerryFile): number | undefined {
  const p = file.state === 'postprocessing' ? file.progress.postprocess : undefined;
  if (p?.mode !== 'determinate' || typeof p.value !== 'number' || !Number.isFinite(p.value)) return undefined;
  return Math.round(Math.min(1, Math.max(0, p.value)) * 100);
}

/**
 * The mean processing progress 0..100 of the files processing, undefined unless all report one.
 * The status bar's selector runs after every change of the store: the count of postprocessing
 * files answers most of them without walking the files (10,000 of them while a large pick's sizes
 * are committed: a sixteenth of the main thread went here).
 */
export function batchProcessingPercent(state: Pick<FerryState, 'files' | 'counts'>): number | undefined {
  if (state.counts.postprocessing === 0) return undefined;
  let sum = 0;
  let n = 0;
  for (const id in state.files) {
    const file = state.files[id] as FerryFile;
    if (file.state !== 'postprocessing') continue;
    const p = processingPercent(file);
    if (p === undefined) return undefined;
    sum += p;
    n += 1;
  }
  return n === 0 ? undefined : Math.round(sum / n);
}
