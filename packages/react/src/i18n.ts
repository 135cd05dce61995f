/**
 * Strings for the UI. Every string goes through the core's locale table (`ferry.i18n`), so a page
 * translates the Dashboard with `new Ferry({ locale: { ... } })`. The keys below are the
 * Dashboard's own; they are used only when the core's table has no entry for them.
 */
import type { Ferry } from '@ferry/core';
import { useMemo } from 'react';
import { useFerry } from './context.tsx';

type Entry = string | { one: string; other: string };

export const dashboardStrings: Record<string, Entry> = {
  dashboardLabel: 'File upload',
  dropHint: 'Drop your files here',
  dropPasteFiles: 'Drop files here or %{browseFiles}',
  browseFiles: 'browse files',
  browseFolders: 'browse folders',
  orImportFrom: 'or import from',
  myDevice: 'My device',
  link: 'Link',
  camera: 'Camera',
  addMore: 'Add more',
  back: 'Back',
  close: 'Close',
  closeModal: 'Close Modal',
  openDashboard: 'Upload files',
  xFilesSelected: { one: '%{smart_count} file selected', other: '%{smart_count} files selected' },
  filesList: 'Files',
  uploadXFiles: { one: 'Upload %{smart_count} file', other: 'Upload %{smart_count} files' },
  uploading: 'Uploading',
  preprocessing: 'Preparing upload...',
  postprocessing: 'Processing',
  complete: 'Complete',
  paused: 'Paused',
  error: 'Error',
  waiting: 'Waiting',
  pauseAll: 'Pause all',
  resumeAll: 'Resume all',
  retryAll: 'Retry all',
  retry: 'Retry',
  retryUpload: 'Retry upload',
  pauseUpload: 'Pause upload',
  resumeUpload: 'Resume upload',
  cancel: 'Cancel',
  done: 'Done',
  removeFile: 'Remove file',
  editFile: 'Edit file',
  editing: 'Editing %{file}',
  saveChanges: 'Save changes',
  fileName: 'Name',
  details: 'Details',
  dismiss: 'Dismiss',
  xFilesFailed: { one: '%{smart_count} file failed to upload', other: '%{smart_count} files failed to upload' },
  dataUploadedOfTotal: '%{complete} of %{total}',
  xTimeLeft: '%{time} left',
  uploadSpeed: '%{speed}/s',
  totalProgress: 'Total upload progress',
  fileProgress: '%{file} upload progress',
  import: 'Import',
  enterUrlToImport: 'Enter URL to import a file',
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
  allowAccessTitle: 'Please allow access to your camera',
  allowAccessDescription: 'In order to take pictures or record video with your camera, please allow camera access.',
  webcamNotSupported: 'Webcam access not supported',
  recordingUnsupported: 'Could not retrieve recording: Unsupported media type',
  smile: 'Smile!',
  countdown: '%{seconds}…',
  incorrectUrl: 'Incorrect URL: Please make sure you are entering a direct link to a file',
  failedToFetch: 'Companion failed to fetch this URL, please make sure it’s correct',
  failedToFetchFile: 'Failed to fetch the file',
  cannotReadImage: 'cannot read image',
  folder: 'Folder',
};

function fill(entry: Entry, vars: Record<string, string | number>): string {
  const text = typeof entry === 'string' ? entry : Number(vars.smart_count ?? 0) === 1 ? entry.one : entry.other;
  return text.replace(/%\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

/** Translates through the engine's table, falling back to the Dashboard's own defaults. */
export function translator(ferry: Ferry): Translate {
  return (key, vars = {}) => {
    const text = ferry.i18n(key, vars);
    if (text !== key) return text;
    const entry = dashboardStrings[key];
    return entry === undefined ? key : fill(entry, vars);
  };
}

/** The translate function of the nearest engine. */
export function useI18n(): Translate {
  const ferry = useFerry();
  return useMemo(() => translator(ferry), [ferry]);
}
