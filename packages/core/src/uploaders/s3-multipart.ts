/**
 * Multipart uploads straight to an S3-compatible bucket, signed by the companion: create ->
 * sign parts (in batches) -> PUT each part to its signed URL (several at once) -> read the
 * part's ETag -> complete. Bookkeeping lives on the file (`s3Multipart: {key, uploadId, parts}`)
 * so that pause (abort the part requests) and resume (list the parts already stored, send the
 * rest) work across `upload()` calls; cancel and remove abort the upload on the store.
 */
import { DEFAULT_RETRY_DELAYS, withRetries } from '../retryer.ts';
import type { FerryFile } from '../types.ts';
import { type UploadContext, type Uploader, UploaderError, type UploadResult } from '../uploader.ts';
import { type CreatedUpload, pickMeta, retryStatus, S3Signer, type S3SignerOptions } from './s3-signer.ts';
import { readS3Xml } from './s3-xml.ts';
import { sendXhr } from './send-xhr.ts';

/** S3's smallest part (except the last): 5 MiB. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
/** S3's largest part count. */
export const MAX_PARTS = 10_000;
/** Parts sent at once per file when `limit` is unset (the spec's fallback). */
export const DEFAULT_PART_LIMIT = 5;

export interface S3MultipartOptions extends S3SignerOptions {
  /** Parts in flight at once for one file (default 5). */
  limit?: number;
  /** Part size for a file of `size` bytes (default: the larger of size/10000 and 5 MiB). */
  getChunkSize?: (size: number) => number;
  /** Meta fields sent as object metadata; all by default. */
  allowedMetaFields?: string[];
  /** Delays between automatic retries of one request (default 0, 1000, 3000, 5000 ms). */
  retryDelays?: number[];
}

export interface PlannedPart {
  PartNumber: number;
  start: number;
  end: number;
}

/** The spec's part size: the larger of size/10000 and 5 MiB. */
export function defaultChunkSize(size: number): number {
  return Math.max(Math.ceil(size / MAX_PARTS), MIN_PART_SIZE);
}

/** Splits `size` bytes into parts of `chunk` bytes (an empty file is one empty part). */
export function planParts(size: number, chunk: number): PlannedPart[] {
  const safeChunk = Math.max(chunk, Math.ceil(size / MAX_PARTS), 1);
  const parts: PlannedPart[] = [];
  for (let start = 0, n = 1; start < size || n === 1; start += safeChunk, n += 1) {
    parts.push({ PartNumber: n, start, end: Math.min(start + safeChunk, size) });
    if (size === 0) break;
  }
  return parts;
}

export class S3MultipartUploader implements Uploader {
  readonly #options: S3MultipartOptions;
  readonly #signer: S3Signer;

  constructor(options: S3MultipartOptions) {
    this.#options = options;
    this.#signer = new S3Signer(options);
  }

  async upload(file: FerryFile, context: UploadContext): Promise<UploadResult> {
    this.#signer.useEngineHeaders(context.headers);
    const data = file.data;
    if (!data) throw new UploaderError('s3: the file has no local data', { retryable: false });
    const size = data.size;
    const chunk = (this.#options.getChunkSize ?? defaultChunkSize)(size);
    const plan = planParts(size, chunk);
    // One controller for this run: a failed part stops its siblings; pause/cancel stop all.
    const run = new AbortController();
    const stop = () => run.abort();
    context.signal.addEventListener('abort', stop, { once: true });
    if (context.signal.aborted) run.abort();
    const retry = <T>(attempt: () => Promise<T>) =>
      withRetries(attempt, {
        delays: this.#options.retryDelays ?? DEFAULT_RETRY_DELAYS,
        signal: run.signal,
        isOnline: context.isOnline,
        statusOf: retryStatus,
      });

    let upload: CreatedUpload | undefined = file.s3Multipart
      ? { key: file.s3Multipart.key, uploadId: file.s3Multipart.uploadId }
      : undefined;
    const done = new Map<number, { ETag: string; Size: number }>();
    const onAbort = () => {
      const reason = context.reason();
      if (upload && (reason === 'cancel' || reason === 'remove'))
        void this.#signer.abort(upload).catch(() => undefined);
    };
    context.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (upload) {
        const resumed = upload;
        try {
          const listed = await retry(() => this.#signer.listParts(resumed, run.signal));
          for (const p of listed) {
            const planned = plan[p.PartNumber - 1];
            // Keep only parts whose size matches this plan; others are sent again.
            if (planned && p.Size === planned.end - planned.start)
              done.set(p.PartNumber, { ETag: p.ETag, Size: p.Size });
          }
        } catch (error) {
          if ((error as UploaderError).status !== 404) throw error;
          upload = undefined; // the store forgot it (aborted or expired): start over
        }
      }
      if (!upload) {
        const meta = pickMeta(file.meta, this.#options.allowedMetaFields);
        upload = await retry(() => this.#signer.create(file.name, file.type, meta, run.signal));
        context.patchFile({ s3Multipart: { ...upload, parts: [] } });
      }
      const created = upload;
      await this.#sendParts(data, plan, created, done, context, run, retry);
      const parts = [...done.entries()]
        .sort(([a], [b]) => a - b)
        .map(([PartNumber, p]) => ({ PartNumber, ETag: p.ETag }));
      const answer = await retry(() => this.#signer.complete(created, parts, run.signal));
      context.onProgress(size, size);
      return { uploadURL: answer.location, body: answer.body };
    } catch (error) {
      if (context.signal.aborted) throw new UploaderError('aborted', { retryable: true, cause: error });
      throw error;
    } finally {
      context.signal.removeEventListener('abort', stop);
      context.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Aborts the store's multipart upload of a file that is not running (removed while paused). */
  async cancel(file: FerryFile): Promise<void> {
    const state = file.s3Multipart;
    if (state) await this.#signer.abort({ key: state.key, uploadId: state.uploadId }).catch(() => undefined);
  }

  async #sendParts(
    data: Blob,
    plan: PlannedPart[],
    upload: CreatedUpload,
    done: Map<number, { ETag: string; Size: number }>,
    context: UploadContext,
    run: AbortController,
    retry: <T>(attempt: () => Promise<T>) => Promise<T>,
  ): Promise<void> {
    const size = data.size;
    const queue = plan.filter((p) => !done.has(p.PartNumber));
    const limit = Math.max(1, this.#options.limit ?? DEFAULT_PART_LIMIT);
    const inFlight = new Map<number, number>();
    let doneBytes = [...done.values()].reduce((sum, p) => sum + p.Size, 0);
    const report = () => {
      let sent = doneBytes;
      for (const loaded of inFlight.values()) sent += loaded;
      context.onProgress(Math.min(sent, size), size);
    };
    report();

    // Signed URLs, asked for in batches of `limit` numbers ahead of the senders.
    const urls = new Map<number, Promise<string>>();
    const urlFor = (n: number): Promise<string> => {
      const known = urls.get(n);
      if (known) return known;
      const numbers = [n, ...queue.slice(0, limit * 2).map((p) => p.PartNumber)].filter(
        (x, i, all) => !urls.has(x) && all.indexOf(x) === i,
      );
      const batch = this.#signer.signParts(upload, numbers, run.signal);
      for (const x of numbers) {
        const one = batch.then((m) => m.get(x) ?? '');
        one.catch(() => urls.delete(x));
        urls.set(x, one);
      }
      return urls.get(n) ?? batch.then((m) => m.get(n) ?? '');
    };

    const sendPart = async (part: PlannedPart) => {
      await retry(async () => {
        const url = await urlFor(part.PartNumber);
        inFlight.set(part.PartNumber, 0);
        const answer = await sendXhr({
          method: 'PUT',
          url,
          body: data.slice(part.start, part.end),
          signal: run.signal,
          onProgress: (loaded) => {
            inFlight.set(part.PartNumber, loaded);
            report();
          },
        }).finally(() => inFlight.delete(part.PartNumber));
        if (answer.status < 200 || answer.status >= 300) {
          urls.delete(part.PartNumber); // a fresh signature for the next attempt
          const xml = readS3Xml(answer.body);
          throw new UploaderError(context.i18n('non2xx'), {
            status: answer.status,
            details: xml.Message ?? xml.Code,
            retryable: answer.status >= 500 || answer.status === 409 || answer.status === 423,
          });
        }
        if (!answer.etag) throw new UploaderError(context.i18n('etagUnreadable'), { retryable: false });
        const bytes = part.end - part.start;
        done.set(part.PartNumber, { ETag: answer.etag, Size: bytes });
        doneBytes += bytes;
        report();
        context.patchFile({ s3Multipart: { ...upload, parts: partsOf(done) } });
      });
    };

    let failure: unknown;
    const worker = async () => {
      for (let part = queue.shift(); part && !run.signal.aborted; part = queue.shift()) {
        try {
          await sendPart(part);
        } catch (error) {
          failure ??= error;
          run.abort();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
    if (failure !== undefined) throw failure;
    if (run.signal.aborted) throw new UploaderError('aborted', { retryable: true });
  }
}

function partsOf(done: Map<number, { ETag: string; Size: number }>) {
  return [...done.entries()]
    .sort(([a], [b]) => a - b)
    .map(([PartNumber, p]) => ({ PartNumber, ETag: p.ETag, Size: p.Size }));
}
