/** The seam between the engine and the ways bytes travel (tus, XHR, S3...). */
import type { FerryFile, UploadError } from './types.ts';

export interface UploadContext {
  /** Aborted when the file is paused, cancelled or removed. */
  signal: AbortSignal;
  /** Reports bytes sent so far. */
  onProgress(bytesUploaded: number, bytesTotal: number | null): void;
  /** Stores uploader bookkeeping on the file record (e.g. the tus upload URL). */
  patchFile(patch: Partial<Pick<FerryFile, 'tus'>>): void;
}

export interface UploadResult {
  uploadURL?: string;
}

export interface Uploader {
  /** Uploads one file; rejects with an {@link UploaderError} on failure. */
  upload(file: FerryFile, context: UploadContext): Promise<UploadResult>;
}

/** A failed upload, with the server's status when there was one. */
export class UploaderError extends Error implements UploadError {
  readonly status?: number;
  readonly retryable: boolean;

  constructor(message: string, options: { status?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'UploaderError';
    this.status = options.status;
    this.retryable = options.retryable ?? true;
  }
}
