/**
 * tus-js-client's requests sent from a dedicated Worker: an `HttpStack` whose requests the page
 * posts to one Worker (method, URL, headers and body; a `File` or bytes go by structured clone,
 * which shares a file's data rather than copying it), which sends each with XMLHttpRequest and
 * posts the answer back (status, headers, body). Everything else stays on the page: tus-js-client's
 * state machine, retries, pause and cancel (an abort is posted on), the engine's state.
 *
 * Why: with many small files the page's main thread is what limits the upload, and most of its
 * time goes to Chromium's own work per request (starting each loader, tearing it down, handing
 * the answer to script), not to script. In a Worker that work runs on the Worker's thread.
 * Bodies are sent without an upload-progress listener: this stack is for bodies that go in one
 * write (`QUIET_BODY_SIZE`), whose progress the answer's offset reports.
 *
 * The Worker runs `workerMain` from a `blob:` URL, so it needs no file of its own in whatever
 * bundle the page ships. Where no Worker can be made (Node, jsdom, a CSP without `blob:` in
 * `worker-src`), {@link workerHttpStack} returns undefined and the caller keeps its own stack;
 * a Worker that fails later fails its open requests as network errors (tus-js-client retries
 * them) and every later request goes through the fallback stack.
 */
import type * as tus from 'tus-js-client';

/** What the page posts: a request to send, or the id of one to abort. */
export type WorkerCall =
  | { id: number; method: string; url: string; headers: [string, string][]; body: Blob | Uint8Array | null }
  | { abort: number };

/** What the Worker posts back: the answer to request `id`, or that none came (network error). */
export type WorkerAnswer = { id: number; status: number; headers: string; body: string } | { id: number; failed: true };

/** The parts of a Worker this stack uses (a stand-in in tests). */
export interface WorkerLike {
  postMessage(message: WorkerCall): void;
  addEventListener(type: 'message', listener: (event: { data: WorkerAnswer }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
}

/** The scope `workerMain` runs in: a dedicated Worker's global (a stand-in in tests). */
export interface WorkerScope {
  postMessage(message: WorkerAnswer): void;
  addEventListener(type: 'message', listener: (event: { data: WorkerCall }) => void): void;
  XMLHttpRequest: typeof XMLHttpRequest;
}

/**
 * The Worker's whole program. It runs from its source text (`String(workerMain)`), so it uses
 * nothing from outside its own body but `scope`.
 */
export function workerMain(scope: WorkerScope): void {
  const open = new Map<number, XMLHttpRequest>();
  scope.addEventListener('message', ({ data }) => {
    if ('abort' in data) {
      open.get(data.abort)?.abort();
      open.delete(data.abort);
      return;
    }
    const { id } = data;
    const xhr = new scope.XMLHttpRequest();
    open.set(id, xhr);
    xhr.open(data.method, data.url, true);
    for (const [name, value] of data.headers) xhr.setRequestHeader(name, value);
    xhr.onload = () => {
      open.delete(id);
      scope.postMessage({ id, status: xhr.status, headers: xhr.getAllResponseHeaders(), body: xhr.responseText });
    };
    xhr.onerror = () => {
      open.delete(id);
      scope.postMessage({ id, failed: true });
    };
    xhr.send(data.body as XMLHttpRequestBodyInit | null);
  });
}

/** The Worker's source: `workerMain` run on the Worker's own global. */
export const WORKER_SOURCE = `(${String(workerMain)})(self);`;

/** Sends a request through the Worker: its answer, and how to abort it. */
type Send = (request: WorkerRequest, body: unknown) => { answer: Promise<tus.HttpResponse>; abort: () => void };

type Settle = { resolve: (response: tus.HttpResponse) => void; reject: (error: Error) => void };

/** tus-js-client's `HttpStack` over one Worker; `fallback` takes over if the Worker fails. */
export class WorkerHttpStack implements tus.HttpStack {
  readonly #worker: WorkerLike;
  readonly #fallback: tus.HttpStack;
  readonly #waiting = new Map<number, Settle>();
  #next = 0;
  #broken = false;

  constructor(worker: WorkerLike, fallback: tus.HttpStack) {
    this.#worker = worker;
    this.#fallback = fallback;
    worker.addEventListener('message', ({ data }) => {
      const settle = this.#waiting.get(data.id);
      if (!settle) return;
      this.#waiting.delete(data.id);
      if ('failed' in data) settle.reject(new Error('tus: network error (upload worker)'));
      else settle.resolve(new WorkerResponse(data.status, data.headers, data.body));
    });
    // A Worker that could not start (or died) answers nothing more: fail what it holds, so
    // tus-js-client retries it, and send the rest from the page.
    worker.addEventListener('error', () => {
      this.#broken = true;
      for (const settle of this.#waiting.values()) settle.reject(new Error('tus: the upload worker failed'));
      this.#waiting.clear();
    });
  }

  createRequest(method: string, url: string): tus.HttpRequest {
    if (this.#broken) return this.#fallback.createRequest(method, url);
    return new WorkerRequest(method, url, (request, body) => this.#send(request, body));
  }

  getName(): string {
    return 'WorkerHttpStack';
  }

  #send(request: WorkerRequest, body: unknown): { answer: Promise<tus.HttpResponse>; abort: () => void } {
    const id = this.#next++;
    const answer = new Promise<tus.HttpResponse>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    this.#worker.postMessage({
      id,
      method: request.getMethod(),
      url: absolute(request.getURL()),
      headers: request.headers(),
      body: toBody(body),
    });
    return {
      answer,
      // As tus-js-client's own XHR stack: an aborted request's promise never settles.
      abort: () => {
        if (!this.#waiting.delete(id)) return;
        this.#worker.postMessage({ abort: id });
      },
    };
  }
}

/**
 * The Worker runs from a `blob:` URL, against which no relative URL resolves: requests carry
 * URLs resolved against the page.
 */
function absolute(url: string): string {
  const page = (globalThis as { location?: { href: string } }).location?.href;
  try {
    return page ? new URL(url, page).href : url;
  } catch {
    return url;
  }
}

/** A body that can be posted: Blobs and bytes as they are (bytes are copied), nothing else. */
function toBody(body: unknown): Blob | Uint8Array | null {
  if (body === null || body === undefined) return null;
  if (body instanceof Blob || body instanceof Uint8Array) return body;
  throw new Error('tus: the upload worker sends only Blob or byte bodies');
}

class WorkerRequest implements tus.HttpRequest {
  readonly #method: string;
  readonly #url: string;
  readonly #headers: Record<string, string> = {};
  readonly #send: Send;
  #abort: (() => void) | undefined;
  #aborted = false;

  constructor(method: string, url: string, send: Send) {
    this.#method = method;
    this.#url = url;
    this.#send = send;
  }

  getMethod(): string {
    return this.#method;
  }

  getURL(): string {
    return this.#url;
  }

  setHeader(header: string, value: string): void {
    this.#headers[header] = value;
  }

  getHeader(header: string): string | undefined {
    return this.#headers[header];
  }

  headers(): [string, string][] {
    return Object.entries(this.#headers);
  }

  /** Bodies sent here go in one write: their answer reports the offset (the module doc says why). */
  setProgressHandler(): void {}

  send(body: unknown = null): Promise<tus.HttpResponse> {
    // Aborted before it was sent (tus-js-client may abort while it reads the body): never sent.
    if (this.#aborted) return new Promise(() => undefined);
    const { answer, abort } = this.#send(this, body);
    this.#abort = abort;
    return answer;
  }

  abort(): Promise<void> {
    this.#aborted = true;
    this.#abort?.();
    return Promise.resolve();
  }

  getUnderlyingObject(): unknown {
    return undefined;
  }
}

class WorkerResponse implements tus.HttpResponse {
  readonly #status: number;
  readonly #rawHeaders: string;
  readonly #body: string;
  #headers: Map<string, string> | undefined;

  constructor(status: number, headers: string, body: string) {
    this.#status = status;
    this.#rawHeaders = headers;
    this.#body = body;
  }

  getStatus(): number {
    return this.#status;
  }

  /** As `XMLHttpRequest.getResponseHeader`, case-insensitive (undefined when absent). */
  getHeader(header: string): string | undefined {
    this.#headers ??= parseHeaders(this.#rawHeaders);
    return this.#headers.get(header.toLowerCase());
  }

  getBody(): string {
    return this.#body;
  }

  getUnderlyingObject(): unknown {
    return undefined;
  }
}

/** `getAllResponseHeaders()` text into a map by lower-case name (repeated names joined with ", "). */
export function parseHeaders(raw: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of raw.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = headers.get(name);
    headers.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return headers;
}

/**
 * A stack over a new Worker running {@link WORKER_SOURCE}, or undefined where no Worker can be
 * made here (no `Worker`, no `blob:` URLs, or the page's policy refuses it).
 */
export function workerHttpStack(fallback: tus.HttpStack): WorkerHttpStack | undefined {
  const scope = globalThis as { Worker?: typeof Worker; URL?: typeof URL; Blob?: typeof Blob };
  if (typeof scope.Worker !== 'function' || typeof scope.URL?.createObjectURL !== 'function') return undefined;
  try {
    const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
    // The URL stays: revoking it before the Worker has loaded its script could stop it loading.
    const worker = new Worker(url, { name: 'ferry-tus-upload' });
    return new WorkerHttpStack(worker as unknown as WorkerLike, fallback);
  } catch {
    return undefined;
  }
}
