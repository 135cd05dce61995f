/**
 * Single-request uploads straight to an S3-compatible bucket: the companion signs
 * (`GET /s3/params`), the browser sends the file with the signed method: PUT with the signed
 * headers, or POST as a form (signed fields first, the file last). The bucket's XML answer is
 * read for Location, Bucket, Key and ETag, and for Message when it refuses.
 */
import { DEFAULT_RETRY_DELAYS, withRetries } from '../retryer.ts';
import type { FerryFile } from '../types.ts';
import {
  type UploadContext,
  type Uploader,
  UploaderError,
  type UploadResult,
  wholeBody,
  wholePart,
} from '../uploader.ts';
import { pickMeta, retryStatus, S3Signer, type S3SignerOptions } from './s3-signer.ts';
import { readS3Xml } from './s3-xml.ts';
import { sendXhr } from './send-xhr.ts';

export interface S3Options extends S3SignerOptions {
  /** Ask the companion for a presigned PUT or POST (the companion's default, POST, when unset). */
  method?: 'put' | 'post';
  /** Meta fields sent as object metadata; all by default. */
  allowedMetaFields?: string[];
  /** Delays between automatic retries (default 0, 1000, 3000, 5000 ms). */
  retryDelays?: number[];
}

export class S3Uploader implements Uploader {
  readonly #options: S3Options;
  readonly #signer: S3Signer;

  constructor(options: S3Options) {
    this.#options = options;
    this.#signer = new S3Signer(options);
  }

  async upload(file: FerryFile, context: UploadContext): Promise<UploadResult> {
    this.#signer.useEngineHeaders(context.headers);
    const data = file.data;
    if (!data) throw new UploaderError('s3: the file has no local data', { retryable: false });
    const meta = pickMeta(file.meta, this.#options.allowedMetaFields);
    return withRetries(
      async () => {
        const params = await this.#signer.params(file.name, file.type, meta, this.#options.method, context.signal);
        let body: Blob | FormData | Uint8Array<ArrayBuffer>;
        if (params.method === 'POST') {
          const form = new FormData();
          for (const [k, v] of Object.entries(params.fields)) form.append(k, v);
          form.append('file', wholePart(data, context), file.name);
          body = form;
        } else body = wholeBody(data, context);
        const answer = await sendXhr({
          method: params.method,
          url: params.url,
          body,
          headers: params.method === 'PUT' ? params.headers : {},
          signal: context.signal,
          onProgress: (loaded) => context.onProgress(Math.min(loaded, data.size), data.size),
        });
        const xml = readS3Xml(answer.body);
        if (answer.status < 200 || answer.status >= 300) {
          throw new UploaderError(xml.Message ?? context.i18n('uploadError'), {
            status: answer.status,
            details: xml.Code,
            retryable: answer.status >= 500 || answer.status === 409 || answer.status === 423,
          });
        }
        const key = xml.Key ?? params.fields.key;
        const base = params.url.split('?')[0] ?? params.url;
        const uploadURL =
          xml.Location ??
          answer.location ??
          (params.method === 'PUT' ? base : key ? `${base.replace(/\/$/, '')}/${encodeKey(key)}` : base);
        context.onProgress(data.size, data.size);
        return {
          uploadURL,
          status: answer.status,
          body: { location: uploadURL, bucket: xml.Bucket, key, etag: xml.ETag ?? answer.etag ?? undefined },
        };
      },
      {
        delays: this.#options.retryDelays ?? DEFAULT_RETRY_DELAYS,
        signal: context.signal,
        isOnline: context.isOnline,
        statusOf: retryStatus,
      },
    );
  }
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
