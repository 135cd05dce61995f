/** The seam between the engine and the ways bytes travel (tus, XHR, S3, companion...). */
import type { ProviderClient } from './companion/provider.ts';
import type { FilePatch } from './reducer.ts';
import type { FerryFile, UploadError } from './types.ts';

/** Why an upload's signal was aborted. */
export type AbortReason = 'pause' | 'cancel' | 'remove' | 'stall' | 'offline';

/**
 * Extra request headers (e.g. `{ Authorization: 'Bearer ...' }`): a record, or a function called
 * before every request, so an application can hand out a fresh token.
 */
export type RequestHeaders = Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);

/** The headers of every source, later ones winning. */
export async function resolveHeaders(...sources: (RequestHeaders | undefined)[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const source of sources) {
    Object.assign(out, typeof source === 'function' ? await source() : source);
  }
  return out;
}

export interface UploadContext {
  /** Aborted on pause, cancel, remove, stall or going offline; see {@link reason}. */
  signal: AbortSignal;
  /** Reports bytes sent so far (throttled by the engine; call as often as you like). */
  onProgress(bytesUploaded: number, bytesTotal: number | null): void;
  /** Stores uploader bookkeeping on the file record (tus upload URL, S3 upload id, token...). */
  patchFile(patch: FilePatch): void;
  /** Why `signal` was aborted, undefined while it is not. */
  reason(): AbortReason | undefined;
  /** Whether the browser is online now (for the retry policy). */
  isOnline(): boolean;
  /** A string from the engine's locale table. */
  i18n(key: string, vars?: Record<string, string | number>): string;
  /**
   * The engine's companion (`FerryOptions.companionUrl`), for uploaders that go through one: the
   * default for files that name none (`remote.companionUrl`).
   */
  companionUrl?: string;
  /**
   * The engine's client of a cloud provider (its token and refresh), for provider files: on
   * `companionUrl` when given (a file's own companion), else on the engine's.
   */
  providerClient?(id: string, companionUrl?: string): ProviderClient | undefined;
  /** The engine's headers (`FerryOptions.headers`), fresh for each request; uploaders send them on every request. */
  headers?(): Promise<Record<string, string>>;
  /**
   * The file's bytes when the engine read them ahead (small files; see `read-ahead.ts`): the
   * same bytes as `file.data`, and a cheaper request body for the browser than the Blob.
   */
  bytes?(): Uint8Array<ArrayBuffer> | undefined;
}

/**
 * The bytes read ahead for `data` (`UploadContext.bytes`) when they are all of it, else undefined.
 * Sent instead of the Blob they are a cheaper request body, and they are the file as it was
 * picked: Chromium refuses to send a picked file that changed on disk since.
 */
export function bytesReadAhead(data: Blob, context: Pick<UploadContext, 'bytes'>): Uint8Array<ArrayBuffer> | undefined {
  const bytes = context.bytes?.();
  return bytes?.byteLength === data.size ? bytes : undefined;
}

/** The whole file as a request body: the bytes read ahead ({@link bytesReadAhead}), else the Blob. */
export function wholeBody(data: Blob, context: Pick<UploadContext, 'bytes'>): Blob | Uint8Array<ArrayBuffer> {
  return bytesReadAhead(data, context) ?? data;
}

/** The whole file as a form part, which must be a Blob: bytes read ahead become one in memory. */
export function wholePart(data: Blob, context: Pick<UploadContext, 'bytes'>): Blob {
  const bytes = bytesReadAhead(data, context);
  return bytes ? new Blob([bytes], { type: data.type }) : data;
}

/** What {@link Uploader.cancel} gets from the engine. */
export type CancelContext = Pick<UploadContext, 'companionUrl' | 'headers'>;

/** What {@link Uploader.uploaded} gets from the engine: a signal that ends the question. */
export type AskContext = CancelContext & { signal: AbortSignal };

export interface UploadResult {
  uploadURL?: string;
  /** The destination's parsed answer, when there is one. */
  body?: unknown;
  status?: number;
}

export interface Uploader {
  /** Uploads one file; rejects with an {@link UploaderError} on failure. */
  upload(file: FerryFile, context: UploadContext): Promise<UploadResult>;
  /**
   * Optional: uploads several files in one request (XHR bundle mode). When present and it
   * returns true from {@link bundles}, the engine hands it every file of an upload at once.
   */
  uploadBundle?(files: FerryFile[], context: BundleContext): Promise<UploadResult[]>;
  bundles?(): boolean;
  /** Optional: discards server-side state of a file that is not running (removed while paused). */
  cancel?(file: FerryFile, context: CancelContext): Promise<void>;
  /**
   * Optional: asks the server whether the upload the file's bookkeeping names (a tus upload URL)
   * is complete; its result when it is, undefined when it is not or there is nothing to ask.
   * Recovery asks it of restored files, so that none is shown as work the server has done.
   */
  uploaded?(file: FerryFile, context: AskContext): Promise<UploadResult | undefined>;
}

/** Like {@link UploadContext}, with progress for the whole bundle. */
export interface BundleContext extends Omit<UploadContext, 'patchFile'> {
  patchFile(id: string, patch: FilePatch): void;
}

/** A failed upload, with the server's status and message when there was one. */
export class UploaderError extends Error implements UploadError {
  readonly status?: number;
  readonly retryable: boolean;
  readonly details?: string;

  constructor(
    message: string,
    options: { status?: number; retryable?: boolean; details?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'UploaderError';
    this.status = options.status;
    this.retryable = options.retryable ?? true;
    this.details = options.details;
  }
}

/** Any thrown value as the error record a file keeps. */
export function toUploadError(cause: unknown): UploadError {
  if (cause instanceof UploaderError) {
    return {
      message: cause.message,
      retryable: cause.retryable,
      ...(cause.status !== undefined ? { status: cause.status } : {}),
      ...(cause.details !== undefined ? { details: cause.details } : {}),
    };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { message, retryable: true };
}
