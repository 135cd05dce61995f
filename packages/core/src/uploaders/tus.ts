/** Resumable uploads over tus 1.0.0, built on tus-js-client. */
import * as tus from 'tus-js-client';
import type { FerryFile } from '../types.ts';
import { type UploadContext, type Uploader, UploaderError, type UploadResult } from '../uploader.ts';

export interface TusOptions {
  /** Creation URL of the tus endpoint, e.g. `/files/`. */
  endpoint: string;
  /** Bytes per PATCH; unlimited (one request) by default. */
  chunkSize?: number;
  /** Delays between automatic retries, in ms (the spec's numbers by default). */
  retryDelays?: number[];
  headers?: Record<string, string>;
}

export const DEFAULT_RETRY_DELAYS = [0, 1000, 3000, 5000];

export class TusUploader implements Uploader {
  readonly #options: TusOptions;

  constructor(options: TusOptions) {
    this.#options = options;
  }

  upload(file: FerryFile, context: UploadContext): Promise<UploadResult> {
    const data = file.data;
    if (!data) return Promise.reject(new UploaderError('tus: the file has no local data', { retryable: false }));
    return new Promise((resolve, reject) => {
      // tus-js-client spreads options over its defaults, so an explicit `undefined` would
      // erase a default (an undefined chunkSize sends empty PATCHes): pass only what is set.
      const upload = new tus.Upload(data, {
        endpoint: this.#options.endpoint,
        ...(file.tus?.uploadUrl ? { uploadUrl: file.tus.uploadUrl } : {}),
        ...(this.#options.chunkSize ? { chunkSize: this.#options.chunkSize } : {}),
        ...(this.#options.headers ? { headers: this.#options.headers } : {}),
        retryDelays: this.#options.retryDelays ?? DEFAULT_RETRY_DELAYS,
        metadata: { ...file.meta, filename: file.name, filetype: file.type, name: file.name, type: file.type },
        storeFingerprintForResuming: false,
        onUploadUrlAvailable: () => {
          if (upload.url) context.patchFile({ tus: { uploadUrl: upload.url } });
        },
        onProgress: (sent, total) => context.onProgress(sent, total),
        onSuccess: () => resolve({ uploadURL: upload.url ?? undefined }),
        onError: (error) => {
          const status = (error as tus.DetailedError).originalResponse?.getStatus();
          reject(new UploaderError(error.message, { status: status || undefined, cause: error }));
        },
      });
      context.signal.addEventListener('abort', () => void upload.abort(false), { once: true });
      upload.start();
    });
  }
}
