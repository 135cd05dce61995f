/** The engine's events, with Uppy's names (eases migration) and their arguments. */
import type { ActiveLocale } from './locale.ts';
import type { Rejection } from './restrictions.ts';
import type {
  FerryFile,
  FileDescriptor,
  InfoMessage,
  ProcessingProgress,
  Progress,
  UploadError,
  UploadResponse,
  UploadSummary,
} from './types.ts';

export interface FerryEvents extends Record<string, unknown[]> {
  'file-added': [file: FerryFile];
  /** Once per `addFiles` call, with every file that was accepted. */
  'files-added': [files: FerryFile[]];
  /** 'restriction-failed': a file added with its size pending was refused once its size was read. */
  'file-removed': [file: FerryFile, reason: 'removed-by-user' | 'cancel-all' | 'restriction-failed'];
  /** An upload run starts, with the ids of the files it takes. */
  upload: [fileIds: string[]];
  'upload-start': [file: FerryFile];
  'upload-progress': [file: FerryFile, progress: Progress];
  'upload-success': [file: FerryFile, response: UploadResponse];
  'upload-error': [file: FerryFile, error: UploadError];
  'upload-pause': [file: FerryFile, isPaused: boolean];
  'upload-retry': [file: FerryFile];
  'retry-all': [files: FerryFile[]];
  'pause-all': [];
  'resume-all': [];
  'cancel-all': [];
  complete: [result: UploadSummary];
  /** Total progress 0..100 changed. */
  progress: [totalProgress: number];
  /** A file was refused (file absent when the rejection is about the whole upload). */
  'restriction-failed': [file: FileDescriptor | undefined, rejection: Rejection];
  'is-offline': [];
  'is-online': [];
  'info-visible': [info: InfoMessage];
  'info-hidden': [info: InfoMessage];
  'preprocess-progress': [file: FerryFile, progress: ProcessingProgress];
  'preprocess-complete': [file: FerryFile];
  'postprocess-progress': [file: FerryFile, progress: ProcessingProgress];
  'postprocess-complete': [file: FerryFile];
  /** `setLocale` switched the language. */
  'locale-change': [locale: ActiveLocale];
}
