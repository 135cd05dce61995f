/**
 * Plain HTTP uploads with XMLHttpRequest (for real upload progress): a multipart form (field
 * `files[]`, meta as fields) or the raw file as the body, to a configured endpoint and method.
 * The answer's `url` becomes the file's `uploadURL`. Bundle mode sends every file of a run in
 * one form request; it needs form mode and cannot include remote files.
 */
import { DEFAULT_RETRY_DELAYS, isRetryableStatus, withRetries } from '../retryer.ts';
import type { FerryFile } from '../types.ts';
import {
  type BundleContext,
  type UploadContext,
  type Uploader,
  UploaderError,
  type UploadResult,
  wholeBody,
  wholePart,
} from '../uploader.ts';
import { sendXhr } from './send-xhr.ts';

export interface XhrOptions {
  /** Where to send the file; a function gets the file (or the first file of a bundle). */
  endpoint: string | ((file: FerryFile) => string);
  /** HTTP method (default POST). */
  method?: string;
  /** Multipart form (default) or the raw file as the body. */
  formData?: boolean;
  /** Form field of the file (default `files[]`). */
  fieldName?: string;
  /** Send every file of an upload run in one request (needs `formData`). */
  bundle?: boolean;
  headers?: Record<string, string> | ((file: FerryFile) => Record<string, string>);
  /** Meta fields sent as form fields; all by default. */
  allowedMetaFields?: string[];
  /** Field of the JSON answer holding the file's URL (default `url`). */
  responseUrlFieldName?: string;
  withCredentials?: boolean;
  /** Delays between automatic retries (default 0, 1000, 3000, 5000 ms). */
  retryDelays?: number[];
}

interface Response {
  status: number;
  body: unknown;
  url: string;
}

export class XhrUploader implements Uploader {
  readonly #options: XhrOptions;

  constructor(options: XhrOptions) {
    if (options.bundle && options.formData === false) {
      throw new UploaderError('`bundle: true` requires `formData: true`', { retryable: false });
    }
    this.#options = options;
  }

  bundles(): boolean {
    return this.#options.bundle === true;
  }

  async upload(file: FerryFile, context: UploadContext): Promise<UploadResult> {
    if (!file.data) throw new UploaderError('xhr: the file has no local data', { retryable: false });
    const data = file.data;
    const form = this.#options.formData !== false;
    const response = await this.#withRetries(context, () => {
      let body: Blob | FormData | Uint8Array<ArrayBuffer>;
      if (form) {
        const fd = new FormData();
        this.#appendMeta(fd, file.meta);
        fd.append(this.#options.fieldName ?? 'files[]', wholePart(data, context), file.name);
        body = fd;
      } else body = wholeBody(data, context);
      return this.#send(file, body, form ? undefined : file.type, context);
    });
    return this.#result(response, (response.body as Record<string, unknown> | null) ?? {});
  }

  async uploadBundle(files: FerryFile[], context: BundleContext): Promise<UploadResult[]> {
    if (files.some((f) => f.isRemote || !f.data)) {
      throw new UploaderError(context.i18n('bundleRemoteFiles'), { retryable: false });
    }
    const first = files[0];
    if (!first) return [];
    const response = await this.#withRetries(context, () => {
      const fd = new FormData();
      this.#appendMeta(fd, first.meta, true);
      for (const f of files) if (f.data) fd.append(this.#options.fieldName ?? 'files[]', f.data, f.name);
      return this.#send(first, fd, undefined, context);
    });
    const body = (response.body as { files?: Record<string, unknown>[] } | null) ?? {};
    return files.map((_, i) => this.#result(response, body.files?.[i] ?? (body as Record<string, unknown>)));
  }

  #withRetries(context: Pick<UploadContext, 'signal' | 'isOnline'>, attempt: () => Promise<Response>) {
    return withRetries(attempt, {
      delays: this.#options.retryDelays ?? DEFAULT_RETRY_DELAYS,
      signal: context.signal,
      isOnline: context.isOnline,
    });
  }

  #result(response: Response, fields: Record<string, unknown>): UploadResult {
    const raw = fields[this.#options.responseUrlFieldName ?? 'url'];
    const uploadURL = typeof raw === 'string' ? new URL(raw, response.url).href : undefined;
    return { uploadURL, body: response.body, status: response.status };
  }

  #appendMeta(fd: FormData, meta: Record<string, string>, skipPerFile = false): void {
    const allowed = this.#options.allowedMetaFields;
    for (const [key, value] of Object.entries(meta)) {
      if (skipPerFile && (key === 'name' || key === 'type' || key === 'relativePath')) continue;
      if (!allowed || allowed.includes(key)) fd.append(key, value);
    }
  }

  async #send(
    file: FerryFile,
    body: Blob | FormData | Uint8Array<ArrayBuffer>,
    contentType: string | undefined,
    context: Pick<UploadContext, 'signal' | 'onProgress' | 'i18n' | 'headers'>,
  ): Promise<Response> {
    const o = this.#options;
    // The engine's headers first; this uploader's own win.
    const engine = (await context.headers?.()) ?? {};
    const headers = { ...engine, ...(typeof o.headers === 'function' ? o.headers(file) : o.headers) };
    const answer = await sendXhr({
      method: o.method ?? 'POST',
      url: typeof o.endpoint === 'function' ? o.endpoint(file) : o.endpoint,
      body,
      headers: { ...(contentType ? { 'Content-Type': contentType } : {}), ...headers },
      withCredentials: o.withCredentials,
      signal: context.signal,
      onProgress: context.onProgress,
      networkError: context.i18n('uploadError'),
    });
    const parsed = parse(answer.body);
    if (answer.status >= 200 && answer.status < 300) return { status: answer.status, body: parsed, url: answer.url };
    const serverMessage = (parsed as { message?: unknown } | null)?.message;
    throw new UploaderError(typeof serverMessage === 'string' ? serverMessage : context.i18n('uploadError'), {
      status: answer.status,
      retryable: isRetryableStatus(answer.status),
      details: typeof serverMessage === 'string' ? undefined : answer.body.slice(0, 200) || undefined,
    });
  }
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}
