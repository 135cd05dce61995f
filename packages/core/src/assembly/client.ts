/**
 * The Assembly API calls the widget makes: create (`POST {service}/assemblies`, a multipart form
 * with `params`, `signature`, `fields` and `num_expected_upload_files`, as Uppy sends it), watch
 * (`GET {assembly_ssl_url}` until the Assembly is no longer busy, with a bounded backoff, a
 * deadline and an abort) and cancel (`DELETE {assembly_ssl_url}`, no body, as Uppy does).
 */
import { type AssemblyStatus, isBusy } from './status.ts';

/** What the application's signing endpoint hands the page: `params` as the exact JSON string signed. */
export interface AssemblyParams {
  params: string;
  signature?: string;
  /** Extra form fields (`${fields.NAME}` in the instructions). */
  fields?: Record<string, string>;
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** The service's refusal or a failed request, with the service's message when it gave one. */
export class AssemblyError extends Error {
  readonly code?: string;
  readonly status?: number;
  constructor(message: string, options: { code?: string; status?: number } = {}) {
    super(message);
    this.name = 'AssemblyError';
    this.code = options.code;
    this.status = options.status;
  }
}

/** Reads a status body; a non-2xx answer or an `error` field becomes an {@link AssemblyError}. */
async function readStatus(response: Response): Promise<AssemblyStatus> {
  let body: AssemblyStatus | undefined;
  try {
    body = (await response.json()) as AssemblyStatus;
  } catch {
    body = undefined;
  }
  if (!response.ok || !body || typeof body !== 'object') {
    const message = body?.message || body?.error || `The processing service answered ${response.status}`;
    throw new AssemblyError(message, { code: body?.error ?? undefined, status: response.status });
  }
  return body;
}

/** `POST {service}/assemblies`: the new Assembly's status. */
export async function createAssembly(
  fetcher: FetchLike,
  service: string,
  signed: AssemblyParams,
  expectedFiles: number,
  signal?: AbortSignal,
): Promise<AssemblyStatus> {
  const form = new FormData();
  form.append('params', signed.params);
  if (signed.signature !== undefined) form.append('signature', signed.signature);
  for (const [name, value] of Object.entries(signed.fields ?? {})) form.append(name, value);
  form.append('num_expected_upload_files', String(expectedFiles));
  // Leading slash, as Uppy builds it: the API lives at the origin's root.
  const url = new URL('/assemblies', service).href;
  const status = await readStatus(await fetcher(url, { method: 'POST', body: form, signal }));
  if (status.error) throw new AssemblyError(status.message || status.error, { code: status.error });
  if (!status.tus_url || !(status.assembly_ssl_url || status.assembly_url)) {
    throw new AssemblyError('The processing service answered without tus_url or assembly_url');
  }
  return status;
}

/** `DELETE {assembly_ssl_url}`; best effort, errors are the caller's to ignore. */
export async function cancelAssembly(fetcher: FetchLike, url: string): Promise<void> {
  await fetcher(url, { method: 'DELETE' });
}

export interface WatchOptions {
  /** Waits between polls in ms; the last repeats. */
  delays: readonly number[];
  /** Gives up after this long (ms). */
  timeout: number;
  /** Failed polls in a row before giving up (a network blip is retried). */
  maxFailures: number;
  signal: AbortSignal;
  onStatus(status: AssemblyStatus): void;
}

/** Default waits between polls: quick at first, then every 5 s (the docs allow 3 a second). */
export const DEFAULT_POLL_DELAYS: readonly number[] = [500, 1000, 2000, 3000, 5000];
/** Default deadline of one Assembly's processing: 30 minutes. */
export const DEFAULT_ASSEMBLY_TIMEOUT = 30 * 60 * 1000;

/** Resolves after `ms`, or rejects when `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Polls `url` until the Assembly is no longer busy and resolves with that final status (which
 * may be an error status); rejects on abort, on the deadline, or after `maxFailures` failed polls
 * in a row. Every status seen goes to `onStatus`.
 */
export async function watchAssembly(fetcher: FetchLike, url: string, options: WatchOptions): Promise<AssemblyStatus> {
  const { delays, signal } = options;
  const deadline = Date.now() + options.timeout;
  let failures = 0;
  for (let attempt = 0; ; attempt++) {
    if (Date.now() >= deadline) throw new AssemblyError('Processing took too long and was given up');
    try {
      const status = await readStatus(await fetcher(url, { signal }));
      failures = 0;
      options.onStatus(status);
      if (!isBusy(status)) return status;
    } catch (cause) {
      if (signal.aborted) throw signal.reason;
      failures += 1;
      // The service said the Assembly failed or does not exist: no point asking again.
      if (cause instanceof AssemblyError && cause.status !== undefined && cause.status < 500 && cause.status !== 429)
        throw cause;
      if (failures >= options.maxFailures) throw cause;
    }
    await wait(delays[Math.min(attempt, delays.length - 1)] ?? 1000, signal);
  }
}
