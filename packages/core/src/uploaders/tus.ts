/**
 * Resumable uploads over tus 1.0.0, built on tus-js-client. Pause aborts the request and keeps
 * the upload URL on the file (`tus.uploadUrl`), so the next `upload()` continues from the
 * server's offset; cancel or remove terminates the upload on the server. A small file (up to
 * `smallFileSize`) goes in one request, its bytes in the creation POST (creation-with-upload),
 * and leaves no resume entry in the browser's storage: there is nothing worth resuming.
 */
import * as tus from 'tus-js-client';
import { DEFAULT_RETRY_DELAYS, shouldRetry } from '../retryer.ts';
import type { FerryFile } from '../types.ts';
import {
  type AskContext,
  bytesReadAhead,
  type CancelContext,
  type RequestHeaders,
  resolveHeaders,
  type UploadContext,
  type Uploader,
  UploaderError,
  type UploadResult,
} from '../uploader.ts';
import { type WorkerHttpStack, workerHttpStack } from './tus-worker.ts';

export { DEFAULT_RETRY_DELAYS } from '../retryer.ts';

/** Default {@link TusOptions.smallFileSize}: 1 MiB. */
export const DEFAULT_SMALL_FILE_SIZE = 1024 * 1024;

export interface TusOptions {
  /** Creation URL of the tus endpoint, e.g. `/files/`. */
  endpoint: string;
  /** Bytes per PATCH; unlimited (one request) by default. */
  chunkSize?: number;
  /** Delays between automatic retries, in ms (the spec's 0, 1000, 3000, 5000 by default). */
  retryDelays?: number[];
  /** Extra headers on every request (merged over the engine's `headers`); a function is called per request. */
  headers?: RequestHeaders;
  /** Continue an earlier upload of the same file found in the browser's storage (default true). */
  resume?: boolean;
  /** Meta fields sent as tus metadata; all by default. */
  allowedMetaFields?: string[];
  /**
   * Files up to this many bytes are sent whole in the creation request (the server must
   * offer tus' `creation-with-upload`, as Ferry, tusd and @tus/server do) and are never looked
   * up or recorded for resuming: one request per file instead of two, no storage scan per file.
   * Default {@link DEFAULT_SMALL_FILE_SIZE}; 0 turns it off.
   */
  smallFileSize?: number;
  /**
   * Send bodies up to {@link QUIET_BODY_SIZE} from a dedicated Worker (`tus-worker.ts`), so
   * Chromium's work per request runs off the page's main thread. Falls back to the page's own
   * requests where no Worker can be made. Default false.
   */
  uploadWorker?: boolean;
}

/**
 * Hands tus-js-client the whole file when a request carries all of it, rather than a slice of
 * it: `Blob.slice` on a picked file costs the page a round trip to the browser's blob registry.
 * The bytes the engine read ahead, when it did, go instead of the file: a cheaper body still.
 * tus-js-client takes a body's length from its `size`, which bytes are given.
 */
function wholeFileReader(bytes: Uint8Array<ArrayBuffer> | undefined): tus.FileReader {
  return {
    openFile: async (input: Blob) => ({
      size: input.size,
      slice: async (start: number, end: number) => ({
        value: start === 0 && end >= input.size ? (bytes ? sized(bytes) : input) : input.slice(start, end),
        done: end >= input.size,
      }),
      close: () => undefined,
    }),
  };
}

/**
 * Files up to this many bytes are sent without an upload-progress listener (64 KiB). A listener
 * on `xhr.upload` makes Chromium report the body's progress to the page (events, a task each)
 * for a body that goes in one write; the answer's offset reports the whole file anyway, and 500
 * bare requests of 10 KiB took up to a fifth longer with one.
 */
export const QUIET_BODY_SIZE = 64 * 1024;

/** tus-js-client's XHR requests, with `setProgressHandler` ignored: for files whose body is tiny. */
class QuietHttpStack implements tus.HttpStack {
  readonly #inner = new tus.DefaultHttpStack({});

  createRequest(method: string, url: string): tus.HttpRequest {
    const request = this.#inner.createRequest(method, url);
    request.setProgressHandler = () => undefined;
    return request;
  }

  getName(): string {
    return 'QuietHttpStack';
  }
}

const quietHttpStack = new QuietHttpStack();

/** A view of `bytes` with the `size` tus-js-client reads. */
function sized(bytes: Uint8Array<ArrayBuffer>): Uint8Array & { size: number } {
  return Object.assign(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), { size: bytes.byteLength });
}

export class TusUploader implements Uploader {
  readonly #options: TusOptions;
  /** The endpoint as a full URL, that relative upload URLs resolve against (read once). */
  #base: URL | string | undefined;
  /** The Worker's stack once made; null where none can be made. */
  #worker: WorkerHttpStack | null | undefined;

  constructor(options: TusOptions) {
    this.#options = options;
  }

  upload(file: FerryFile, context: UploadContext): Promise<UploadResult> {
    const data = file.data;
    if (!data) return Promise.reject(new UploaderError('tus: the file has no local data', { retryable: false }));
    const smallFileSize = this.#options.smallFileSize ?? DEFAULT_SMALL_FILE_SIZE;
    const small = smallFileSize > 0 && data.size <= smallFileSize;
    const resume = (this.#options.resume ?? true) && !small;
    return new Promise((resolve, reject) => {
      // tus-js-client spreads options over its defaults, so an explicit `undefined` would
      // erase a default (an undefined chunkSize sends empty PATCHes): pass only what is set.
      let kept = false;
      const keepUrl = () => {
        if (kept || !upload.url) return;
        kept = true;
        context.patchFile({ tus: { uploadUrl: this.#absolute(upload.url) } });
      };
      const upload = new tus.Upload(data, {
        endpoint: this.#options.endpoint,
        ...(file.tus?.uploadUrl ? { uploadUrl: file.tus.uploadUrl } : {}),
        ...(this.#options.chunkSize ? { chunkSize: this.#options.chunkSize } : {}),
        uploadDataDuringCreation: small,
        fileReader: wholeFileReader(small ? bytesReadAhead(data, context) : undefined),
        ...(data.size <= QUIET_BODY_SIZE ? { httpStack: this.#quietStack() } : {}),
        // Headers are set per request, so a refreshed token reaches every PATCH and HEAD.
        onBeforeRequest: async (req) => {
          const headers = await resolveHeaders(context.headers, this.#options.headers);
          for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
        },
        retryDelays: this.#options.retryDelays ?? [...DEFAULT_RETRY_DELAYS],
        metadata: this.#metadata(file),
        storeFingerprintForResuming: resume,
        removeFingerprintOnSuccess: true,
        onShouldRetry: (error) => shouldRetry(error.originalResponse?.getStatus(), context.isOnline()),
        // A small file's URL comes with the answer to its whole body, so it is kept only if the
        // server took part of it (bytes are left to PATCH): a state change less per small file.
        onUploadUrlAvailable: () => {
          if (!small) keepUrl();
        },
        onChunkComplete: (_sent, accepted, total) => {
          if (small && accepted < total) keepUrl();
        },
        onProgress: (sent, total) => context.onProgress(sent, total),
        onSuccess: () => resolve({ uploadURL: upload.url ? this.#absolute(upload.url) : undefined }),
        onError: (error) => reject(toError(error, context)),
      });
      context.signal.addEventListener(
        'abort',
        () => {
          const reason = context.reason();
          // Terminating also deletes the partial upload on the server.
          upload.abort(reason === 'cancel' || reason === 'remove').catch(() => undefined);
          reject(new UploaderError('aborted', { retryable: true }));
        },
        { once: true },
      );
      if (context.signal.aborted) return;
      if (file.tus?.uploadUrl || !resume) {
        upload.start();
        return;
      }
      upload
        .findPreviousUploads()
        .then((previous) => {
          const last = previous[0];
          if (last) upload.resumeFromPreviousUpload(last);
        })
        .catch(() => undefined)
        .finally(() => {
          if (!context.signal.aborted) upload.start();
        });
    });
  }

  /** Deletes the server's partial upload of a file that is not running (e.g. removed while paused). */
  async cancel(file: FerryFile, context?: CancelContext): Promise<void> {
    const url = file.tus?.uploadUrl;
    if (!url) return;
    const headers = await resolveHeaders(context?.headers, this.#options.headers);
    await tus.Upload.terminate(url, { headers }).catch(() => undefined);
  }

  /**
   * Whether the server holds the whole upload the file's `tus.uploadUrl` names: a HEAD answers
   * its offset, and `Upload-Offset` equal to `Upload-Length` means done (a restored file whose
   * page went away before it heard the last answer).
   */
  async uploaded(file: FerryFile, context: AskContext): Promise<UploadResult | undefined> {
    const url = file.tus?.uploadUrl;
    if (!url) return undefined;
    const headers = await resolveHeaders(context.headers, this.#options.headers);
    const res = await fetch(url, {
      method: 'HEAD',
      headers: { ...headers, 'Tus-Resumable': '1.0.0' },
      signal: context.signal,
      cache: 'no-store',
    });
    const offset = res.headers.get('Upload-Offset');
    const length = res.headers.get('Upload-Length');
    if (!res.ok || offset === null || length === null || offset !== length) return undefined;
    return { uploadURL: url };
  }

  /** The stack for bodies that go in one write: the Worker's when asked for and possible. */
  #quietStack(): tus.HttpStack {
    if (!this.#options.uploadWorker) return quietHttpStack;
    if (this.#worker === undefined) this.#worker = workerHttpStack(quietHttpStack) ?? null;
    return this.#worker ?? quietHttpStack;
  }

  /** The server may answer a relative Location; the file record keeps a full URL. */
  #absolute(url: string): string {
    try {
      this.#base ??= this.#endpointUrl();
      return new URL(url, this.#base).href;
    } catch {
      return url;
    }
  }

  #endpointUrl(): URL | string {
    const page = (globalThis as { location?: { href: string } }).location?.href;
    return page ? new URL(this.#options.endpoint, page) : this.#options.endpoint;
  }

  #metadata(file: FerryFile): Record<string, string> {
    const allowed = this.#options.allowedMetaFields;
    const meta: Record<string, string> = {};
    for (const [key, value] of Object.entries(file.meta)) {
      if (!allowed || allowed.includes(key)) meta[key] = String(value);
    }
    return { ...meta, name: file.name, type: file.type, filename: file.name, filetype: file.type };
  }
}

/**
 * tus-js-client's error as the file's error. Its own message is a long technical wrapper
 * ("tus: unexpected response while creating upload, originated from request (method: POST, ...");
 * the person sees what the server said instead (a hook's or the endpoint's message), and the
 * wrapper stays in the details for whoever debugs.
 */
function toError(error: Error, context: UploadContext): UploaderError {
  const response = (error as tus.DetailedError).originalResponse;
  const status = response?.getStatus() || undefined;
  const body = response?.getBody()?.trim() || undefined;
  if (status === 423) {
    return new UploaderError(context.i18n('uploadLocked'), { status, details: body, cause: error });
  }
  const said = serverMessage(body);
  return new UploaderError(said ?? context.i18n('uploadError'), {
    status,
    retryable: status === undefined || shouldRetry(status, true),
    details: said === undefined ? error.message : undefined,
    cause: error,
  });
}

/** Longest server text shown as a file's error. */
const MAX_SERVER_MESSAGE = 300;

/**
 * What a server said in a failed answer's body: the `message` of a JSON body (Ferry's errors,
 * most hook receivers), else a plain-text body's first line; nothing for an empty body or an
 * HTML error page.
 */
export function serverMessage(body: string | undefined): string | undefined {
  const text = body?.trim();
  if (!text) return undefined;
  if (text.startsWith('{')) {
    try {
      const message = (JSON.parse(text) as { message?: unknown } | null)?.message;
      return typeof message === 'string' && message.trim() ? clip(message.trim()) : undefined;
    } catch {
      // Not JSON after all: read it as text.
    }
  }
  if (text.startsWith('<')) return undefined;
  return clip(text.split('\n', 1)[0]?.trim() ?? '');
}

function clip(text: string): string | undefined {
  if (!text) return undefined;
  return text.length > MAX_SERVER_MESSAGE ? `${text.slice(0, MAX_SERVER_MESSAGE - 1)}…` : text;
}
