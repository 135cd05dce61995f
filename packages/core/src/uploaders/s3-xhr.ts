/**
 * One request straight to the bucket with XMLHttpRequest (fetch cannot report upload progress):
 * resolves with the status, body and the headers S3 uploads are read for (ETag, Location),
 * whatever the status; rejects only when no answer came (network error or abort).
 */
import { UploaderError } from '../uploader.ts';

export interface XhrAnswer {
  status: number;
  body: string;
  /** null when absent or hidden by the bucket's CORS (not in Access-Control-Expose-Headers). */
  etag: string | null;
  location: string | null;
}

export interface XhrRequest {
  method: string;
  url: string;
  body: Blob | FormData;
  headers?: Record<string, string>;
  signal: AbortSignal;
  onProgress?: (loaded: number) => void;
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
    for (const [k, v] of Object.entries(request.headers ?? {})) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => request.onProgress?.(e.loaded);
    xhr.onload = () => {
      done();
      resolve({
        status: xhr.status,
        body: xhr.responseText,
        etag: xhr.getResponseHeader('ETag'),
        location: xhr.getResponseHeader('Location'),
      });
    };
    xhr.onerror = () => {
      done();
      reject(new UploaderError('Non 2xx', { details: 'network error', retryable: true }));
    };
    xhr.onabort = () => {
      done();
      reject(new UploaderError('aborted', { retryable: true }));
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    xhr.send(request.body);
  });
}
