/**
 * One request with XMLHttpRequest, the sender every XHR-based uploader (xhr, s3, s3-multipart)
 * shares: fetch cannot report upload progress. Resolves with the status, body, final URL and the
 * headers uploads are read for (ETag, Location), whatever the status; rejects only when no answer
 * came (network error or abort). What a status means is the caller's business.
 */
import { UploaderError } from '../uploader.ts';

export interface XhrAnswer {
  status: number;
  body: string;
  /** The URL that answered (after redirects), or the request's. */
  url: string;
  /** null when absent or hidden by CORS (not in Access-Control-Expose-Headers). */
  etag: string | null;
  location: string | null;
}

export interface XhrRequest {
  method: string;
  url: string;
  body: Blob | FormData | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
  withCredentials?: boolean;
  signal: AbortSignal;
  onProgress?: (loaded: number, total: number | null) => void;
  /** The message of the rejection when the request fails without an answer (default 'Non 2xx'). */
  networkError?: string;
}

export function sendXhr(request: XhrRequest): Promise<XhrAnswer> {
  return new Promise((resolve, reject) => {
    if (request.signal.aborted) {
      reject(new UploaderError('aborted', { retryable: true }));
      return;
    }
    const xhr = new XMLHttpRequest();
    const onAbort = () => xhr.abort();
    const done = () => request.signal.removeEventListener('abort', onAbort);
    xhr.open(request.method, request.url, true);
    xhr.withCredentials = request.withCredentials ?? false;
    for (const [k, v] of Object.entries(request.headers ?? {})) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => request.onProgress?.(e.loaded, e.lengthComputable ? e.total : null);
    xhr.onload = () => {
      done();
      resolve({
        status: xhr.status,
        body: xhr.responseText,
        url: xhr.responseURL || request.url,
        etag: xhr.getResponseHeader('ETag'),
        location: xhr.getResponseHeader('Location'),
      });
    };
    xhr.onerror = () => {
      done();
      reject(new UploaderError(request.networkError ?? 'Non 2xx', { details: 'network error', retryable: true }));
    };
    xhr.onabort = () => {
      done();
      reject(new UploaderError('aborted', { retryable: true }));
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    xhr.send(request.body);
  });
}
