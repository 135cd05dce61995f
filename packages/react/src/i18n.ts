/**
 * Strings for the UI. Every string goes through the core's locale table (`ferry.i18n`), so a page
 * translates the Dashboard with `new Ferry({ locale: { ... } })`. The keys below are the
 * Dashboard's own; they are used only when the core's table has no entry for them.
 */
import { type Ferry, type LocaleEntry, translate } from '@ferry/core';
import { useMemo } from 'react';
import { useFerry } from './context.tsx';

/** The Dashboard's own strings; those the core's table has (states, link import, camera...) live there. */
export const dashboardStrings: Record<string, LocaleEntry> = {
  dashboardLabel: 'File upload',
  dropHint: 'Drop your files here',
  orImportFrom: 'or import from',
  myDevice: 'My device',
  link: 'Link',
  camera: 'Camera',
  back: 'Back',
  close: 'Close',
  closeModal: 'Close Modal',
  openDashboard: 'Upload files',
  filesList: 'Files',
  preprocessing: 'Preparing upload...',
  postprocessing: 'Processing',
  waiting: 'Waiting',
  pauseAll: 'Pause all',
  resumeAll: 'Resume all',
  retryAll: 'Retry all',
  editFile: 'Edit file',
  editing: 'Editing %{file}',
  saveChanges: 'Save changes',
  fileName: 'Name',
  details: 'Details',
  dismiss: 'Dismiss',
  uploadSpeed: '%{speed}/s',
  totalProgress: 'Total upload progress',
  fileProgress: '%{file} upload progress',
  urlLabel: 'File URL',
  importing: 'Importing...',
  takePicture: 'Take a picture',
  startRecording: 'Begin video recording',
  stopRecording: 'Stop video recording',
  recording: 'Recording',
  cameraMode: 'Camera mode',
  modeVideoAudio: 'Video and audio',
  modeVideoOnly: 'Video only',
  modeAudioOnly: 'Audio only',
  modePicture: 'Picture',
  allowAccessDescription: 'In order to take pictures or record video with your camera, please allow camera access.',
  countdown: '%{seconds}…',
  folder: 'Folder',
};

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

/** Translates through the engine's table, falling back to the Dashboard's own defaults. */
export function translator(ferry: Ferry): Translate {
  return (key, vars = {}) => {
    const text = ferry.i18n(key, vars);
    return text === key ? translate(dashboardStrings, key, vars) : text;
  };
}

/** The translate function of the nearest engine. */
export function useI18n(): Translate {
  const ferry = useFerry();
  return useMemo(() => translator(ferry), [ferry]);
}
