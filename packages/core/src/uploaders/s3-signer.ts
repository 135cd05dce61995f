/**
 * The companion's S3 signing routes seen from the browser (`/s3/params`, `/s3/multipart/...`),
 * with every answer validated before use: a malformed answer is a clear error, never a crash
 * three calls later. Shared by {@link S3Uploader} and {@link S3MultipartUploader}.
 */
import { resolveHeaders, UploaderError } from '../uploader.ts';

export interface S3SignerOptions {
  /** Base URL of the companion (e.g. `https://uploads.example.com` or `''` for same origin). */
  companionUrl: string;
  /** Extra request headers, e.g. `{ Authorization: 'Bearer ...' }`; a function is called per request. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /** Send cookies to a companion on another origin. */
  withCredentials?: boolean;
}

/** Signed parameters of a single upload. */
export interface UploadParams {
  method: 'PUT' | 'POST';
  url: string;
  fields: Record<string, string>;
  headers: Record<string, string>;
}

export interface CreatedUpload {
  uploadId: string;
  key: string;
}

export interface ListedPart {
  PartNumber: number;
  Size: number;
  ETag: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): v is Record<string, string> =>
  isRecord(v) && Object.values(v).every((x) => typeof x === 'string');

function invalid(what: string, answer: unknown): UploaderError {
  return new UploaderError(`${what}, got ${JSON.stringify(answer)?.slice(0, 200)}`, { retryable: false });
}

/** `/s3/params`: an object with a string url, optional fields, and method put or post. */
export function validateParams(answer: unknown): UploadParams {
  const what = 'S3 upload parameters must be an object with a string `url`, optional `fields` and `method` put or post';
  if (!isRecord(answer) || typeof answer.url !== 'string' || answer.url === '') throw invalid(what, answer);
  const method = String(answer.method ?? 'POST').toUpperCase();
  if (method !== 'PUT' && method !== 'POST') throw invalid(what, answer);
  if (answer.fields !== undefined && answer.fields !== null && !isStringMap(answer.fields)) throw invalid(what, answer);
  if (answer.headers !== undefined && answer.headers !== null && !isStringMap(answer.headers)) {
    throw invalid(what, answer);
  }
  return {
    method,
    url: answer.url,
    fields: (answer.fields as Record<string, string> | undefined) ?? {},
    headers: (answer.headers as Record<string, string> | undefined) ?? {},
  };
}

/** `POST /s3/multipart`: must return uploadId and key. */
export function validateCreate(answer: unknown): CreatedUpload {
  if (!isRecord(answer) || typeof answer.uploadId !== 'string' || typeof answer.key !== 'string') {
    throw invalid('S3 multipart creation must return an object with string `uploadId` and `key`', answer);
  }
  if (answer.uploadId === '' || answer.key === '') {
    throw invalid('S3 multipart creation must return a non-empty `uploadId` and `key`', answer);
  }
  return { uploadId: answer.uploadId, key: answer.key };
}

/** `GET .../batch`: a url for each requested part number. */
export function validateBatch(answer: unknown, numbers: number[]): Map<number, string> {
  const urls = isRecord(answer) ? answer.presignedUrls : undefined;
  const out = new Map<number, string>();
  for (const n of numbers) {
    const url = isRecord(urls) ? urls[String(n)] : undefined;
    if (typeof url !== 'string' || url === '') {
      throw invalid(`Signing part ${n} must return a \`url\``, answer);
    }
    out.set(n, url);
  }
  return out;
}

/** `GET /s3/multipart/{id}?key=`: the parts uploaded so far. */
export function validateParts(answer: unknown): ListedPart[] {
  if (!Array.isArray(answer)) throw invalid('Listing parts must return an array', answer);
  return answer.map((p) => {
    if (!isRecord(p) || typeof p.PartNumber !== 'number' || typeof p.ETag !== 'string') {
      throw invalid('Each listed part must have a numeric `PartNumber` and a string `ETag`', p);
    }
    return { PartNumber: p.PartNumber, Size: typeof p.Size === 'number' ? p.Size : 0, ETag: p.ETag };
  });
}

/** Calls to one companion's S3 routes. */
export class S3Signer {
  readonly #options: S3SignerOptions;
  #engineHeaders: (() => Promise<Record<string, string>>) | undefined;

  constructor(options: S3SignerOptions) {
    this.#options = options;
  }

  /** Sends the engine's headers (`FerryOptions.headers`) too, under this signer's own. */
  useEngineHeaders(headers: (() => Promise<Record<string, string>>) | undefined): void {
    this.#engineHeaders = headers;
  }

  async params(
    name: string,
    type: string,
    meta: Record<string, string>,
    method: 'put' | 'post' | undefined,
    signal: AbortSignal,
  ) {
    const query = new URLSearchParams({ filename: name, type });
    for (const [k, v] of Object.entries(meta)) query.append(`metadata[${k}]`, v);
    if (method) query.set('method', method);
    return validateParams(await this.#call('GET', `s3/params?${query}`, undefined, signal));
  }

  async create(name: string, type: string, meta: Record<string, string>, signal: AbortSignal) {
    const body = { filename: name, type, metadata: meta };
    return validateCreate(await this.#call('POST', 's3/multipart', body, signal));
  }

  async listParts(upload: CreatedUpload, signal: AbortSignal) {
    return validateParts(await this.#call('GET', `${this.#path(upload)}`, undefined, signal));
  }

  async signParts(upload: CreatedUpload, numbers: number[], signal: AbortSignal) {
    const path = `s3/multipart/${encodeURIComponent(upload.uploadId)}/batch?key=${encodeURIComponent(upload.key)}&partNumbers=${numbers.join(',')}`;
    return validateBatch(await this.#call('GET', path, undefined, signal), numbers);
  }

  async complete(upload: CreatedUpload, parts: { PartNumber: number; ETag: string }[], signal: AbortSignal) {
    const path = `s3/multipart/${encodeURIComponent(upload.uploadId)}/complete?key=${encodeURIComponent(upload.key)}`;
    const answer = await this.#call('POST', path, { parts }, signal);
    const location = isRecord(answer) && typeof answer.location === 'string' ? answer.location : undefined;
    return { location, body: answer };
  }

  async abort(upload: CreatedUpload): Promise<void> {
    await this.#call('DELETE', this.#path(upload), undefined, new AbortController().signal);
  }

  #path(upload: CreatedUpload): string {
    return `s3/multipart/${encodeURIComponent(upload.uploadId)}?key=${encodeURIComponent(upload.key)}`;
  }

  async #call(method: string, path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const base = this.#options.companionUrl.replace(/\/+$/, '');
    const extra = await resolveHeaders(this.#engineHeaders, this.#options.headers);
    let response: Response;
    try {
      response = await fetch(`${base}/${path}`, {
        method,
        signal,
        credentials: this.#options.withCredentials ? 'include' : 'same-origin',
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extra,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      if (signal.aborted) throw new UploaderError('aborted', { retryable: true, cause });
      throw new UploaderError(`Failed because: ${(cause as Error)?.message ?? cause}`, { cause });
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const message = isRecord(parsed) && typeof parsed.message === 'string' ? parsed.message : text.slice(0, 200);
      throw new UploaderError(`Failed because: ${message || `HTTP ${response.status}`}`, {
        status: response.status,
        retryable: response.status >= 500 || response.status === 409 || response.status === 423,
      });
    }
    return parsed;
  }
}

/** The meta fields to send as object metadata. */
export function pickMeta(meta: Record<string, string>, allowed?: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta)) if (!allowed || allowed.includes(k)) out[k] = String(v);
  return out;
}

/** The status the retry policy sees: errors marked not retryable count as a 4xx. */
export function retryStatus(error: unknown): number | undefined {
  if (error instanceof UploaderError && !error.retryable) return error.status ?? 400;
  return (error as { status?: number } | null)?.status;
}
