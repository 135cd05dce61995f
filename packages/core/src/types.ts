/** The explicit states of a file; see ARCHITECTURE.md "State of a file". */
export type FileState = 'waiting' | 'preprocessing' | 'uploading' | 'postprocessing' | 'complete' | 'paused' | 'error';

export interface Progress {
  bytesUploaded: number;
  /** Unknown (null) until the size is known, e.g. for some remote files. */
  bytesTotal: number | null;
  /** 0..100 */
  percentage: number;
  /** Epoch ms of the first byte sent, or null before. */
  uploadStarted: number | null;
  uploadComplete: boolean;
}

export interface UploadError {
  message: string;
  /** HTTP status of the failed request, when there was one. */
  status?: number;
  /** Whether a retry can be expected to help. */
  retryable: boolean;
}

/** One file in the store: the spec's per-file upload record. */
export interface FerryFile {
  /** Stable id, unique within a Ferry instance. */
  id: string;
  /** Where the file came from: 'local', 'url', 'camera', a provider id... */
  source: string;
  name: string;
  type: string;
  /** The bytes, for local files. */
  data: Blob | null;
  /** Size in bytes; null when unknown. */
  size: number | null;
  meta: Record<string, string>;
  /** Object URL or data URL of a thumbnail. */
  preview?: string;
  state: FileState;
  progress: Progress;
  error: UploadError | null;
  isPaused: boolean;
  isRemote: boolean;
  /** Where the file ended up once uploaded. */
  uploadURL?: string;
  /** Folder path for files that came from a folder. */
  relativePath?: string;
  /** Resumable-upload bookkeeping of the tus uploader. */
  tus?: { uploadUrl?: string };
}

export interface FerryState {
  /** Files by id. */
  files: Readonly<Record<string, FerryFile>>;
  /** Ids in the order files were added. */
  fileIds: readonly string[];
  /** Overall progress 0..100 over files that are uploading or done. */
  totalProgress: number;
}

/** What a page passes to add a file. */
export interface FileDescriptor {
  name?: string;
  type?: string;
  data: Blob;
  source?: string;
  meta?: Record<string, string>;
  relativePath?: string;
}
