/** The data shapes of @ferry/core: file records, state, descriptors, restrictions, info messages. */
import type { FileHandleLike } from './recovery/bytes.ts';

/** The explicit states of a file; see ARCHITECTURE.md "State of a file". */
export type FileState = 'waiting' | 'preprocessing' | 'uploading' | 'postprocessing' | 'complete' | 'paused' | 'error';

export interface Progress {
  bytesUploaded: number;
  /** Unknown (null) until the size is known, e.g. for some remote files. */
  bytesTotal: number | null;
  /** 0..100 */
  percentage: number;
  /** Epoch ms of the start of the first upload attempt, or null before. */
  uploadStarted: number | null;
  uploadComplete: boolean;
  /** Pre- or postprocessing step shown instead of byte progress (e.g. 'Preparing upload...'). */
  preprocess?: ProcessingProgress;
  postprocess?: ProcessingProgress;
}

/** Progress of a pre- or postprocessor on one file. */
export interface ProcessingProgress {
  mode: 'indeterminate' | 'determinate';
  message: string;
  /** 0..1 in determinate mode. */
  value?: number;
}

export interface UploadError {
  message: string;
  /** HTTP status of the failed request, when there was one. */
  status?: number;
  /** Whether a retry can be expected to help. */
  retryable: boolean;
  /** The server's message or other detail worth showing below the message. */
  details?: string;
}

/**
 * A provider's rate limit being waited out (`companion/provider-wait.ts`): the request or import
 * goes on by itself when `seconds` reaches 0.
 */
export interface Waiting {
  /** Left before the next try. */
  seconds: number;
  /** The whole wait, as the companion asked (`Retry-After`). */
  retryAfter: number;
  /** The companion's words for it. */
  message: string;
  /** 1 for the first wait. */
  attempt: number;
}

/** Where a remote file lives and how a companion fetches it. */
export interface RemoteInfo {
  /**
   * The companion that fetches this file (spec §3); the engine's `companionUrl` when absent. A
   * transfer's `serverToken` only means something to the companion that gave it, so a restored
   * file goes back to its own.
   */
  companionUrl?: string;
  url?: string;
  body: Record<string, unknown>;
  /** The provider id (`drive`...) for a file from a cloud provider. */
  providerName?: string;
  /** The provider's key of the file: `POST /{providerName}/get/{requestPath}` (used verbatim). */
  requestPath?: string;
  providerOptions?: Record<string, unknown>;
}

/** Bookkeeping of an S3 multipart upload, so a paused upload can continue. */
export interface S3MultipartState {
  key: string;
  uploadId: string;
  parts: { PartNumber: number; Size?: number; ETag: string }[];
}

/** What the destination answered for a finished upload. */
export interface UploadResponse {
  status?: number;
  body?: unknown;
  uploadURL?: string;
}

/**
 * One output file of a processing step (an Assembly's `results[step][]` file object): the fields
 * the widget reads, and whatever else the service sent.
 */
export interface AssemblyResult {
  id?: string;
  name?: string;
  /** The upload's id this result was made from. */
  original_id?: string;
  url?: string;
  ssl_url?: string;
  mime?: string;
  size?: number;
  meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One file in the store: the spec's per-file upload record. */
export interface FerryFile {
  /** Stable id, unique within a Ferry instance. */
  id: string;
  /** Where the file came from: 'local', 'url', 'camera', a provider id... */
  source: string;
  name: string;
  type: string;
  /** The bytes, for local files; null for remote files. */
  data: Blob | null;
  /** Size in bytes; null when unknown (remote files, or local ones while `sizePending`). */
  size: number | null;
  /**
   * The size of this local file is still being read: set on files of a large batch, which
   * appear at once and get their sizes in time slices afterwards (size restrictions and
   * duplicate checks apply then). Absent otherwise.
   */
  sizePending?: boolean;
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
  response?: UploadResponse;
  /**
   * What a processing service made of this file (the `assembly` option), by step name: set when
   * the file completes after its Assembly ran.
   */
  results?: Record<string, AssemblyResult[]>;
  /** Folder path for files that came from a folder. */
  relativePath?: string;
  remote?: RemoteInfo;
  /** Resumable-upload bookkeeping of the tus uploader. */
  tus?: { uploadUrl?: string };
  s3Multipart?: S3MultipartState;
  /** Token of the companion's progress socket for a remote transfer. */
  serverToken?: string;
  /**
   * A cloud-provider import waiting out the provider's rate limit, with its countdown (the
   * companion, or the engine, tries again by itself); absent otherwise.
   */
  waiting?: Waiting;
  /**
   * Recovered after a reload without its bytes: shown with its progress, never uploaded until
   * the same file (name, size, modification time) is added again.
   */
  ghost?: boolean;
}

export type InfoType = 'info' | 'warning' | 'error' | 'success';

/** One message of the informer queue, shown by the UI as a toast. */
export interface InfoMessage {
  id: string;
  type: InfoType;
  message: string;
  details?: string;
  /** How long it stays, in ms; 0 = until hidden. */
  duration: number;
}

export interface FerryState {
  /** Files by id. */
  files: Readonly<Record<string, FerryFile>>;
  /** Ids in the order files were added. */
  fileIds: readonly string[];
  /** Overall progress 0..100 over files that are uploading or done, weighted by size. */
  totalProgress: number;
  /** Byte sums behind `totalProgress`, kept incrementally (no walk over all files per change). */
  totals: { bytesUploaded: number; bytesTotal: number };
  /** How many files have `sizePending`; `upload()` waits until it is 0. */
  sizesPending: number;
  /**
   * How many files are in each state, kept incrementally: a status line reads it in O(1) on
   * every change instead of walking every file.
   */
  counts: Readonly<Record<FileState, number>>;
  /**
   * How many files are ghosts (`FerryFile.ghost`; counted as paused in `counts`): they wait for
   * the person to add them again and hold no other file back.
   */
  ghosts: number;
  /** Informer queue, oldest first. */
  info: readonly InfoMessage[];
  isOffline: boolean;
  /** Global meta merged into each file's meta. */
  meta: Readonly<Record<string, string>>;
  capabilities?: Record<string, unknown>;
}

/** What a page passes to add a file. */
export interface FileDescriptor {
  data?: Blob | null;
  name?: string;
  type?: string;
  /** Size when there is no `data` (remote files). */
  size?: number | null;
  source?: string;
  meta?: Record<string, string>;
  relativePath?: string;
  isRemote?: boolean;
  remote?: RemoteInfo;
  preview?: string;
  /** The File System Access handle the file was picked or dropped through (lets recovery skip a copy). */
  handle?: FileHandleLike;
}

/** Limits checked when files are added (and minNumberOfFiles at upload). All unset by default. */
export interface Restrictions {
  maxFileSize: number | null;
  minFileSize: number | null;
  maxTotalFileSize: number | null;
  maxNumberOfFiles: number | null;
  minNumberOfFiles: number | null;
  /** MIME types (`image/png`), wildcards (`image/*`) or extensions (`.pdf`). */
  allowedFileTypes: string[] | null;
}

export interface UploadSummary {
  successful: FerryFile[];
  failed: FerryFile[];
}
