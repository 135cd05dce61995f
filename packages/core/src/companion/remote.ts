/**
 * Companion client: `urlMeta()` asks a companion what is behind a link; `RemoteUploader` runs
 * the transfer of an `isRemote` file through the companion (`POST /url/get`,
 * `/{provider}/get/{id}`, or the file's own route on it such as `/google-picker/get` -> `{token}`, then the progress socket `/api/{token}`), mapping the
 * engine's pause / cancel onto the socket's `pause` / `resume` / `cancel` actions. Wire shapes
 * are Uppy Companion's, so this works against `ferry` and against a stock Companion. A provider's
 * rate limit is a wait, not a failure: a `get` answered 429 is sent again after its `Retry-After`
 * (`provider-wait.ts`), and the socket's `waiting` frame (`ferry` waiting in place) counts down;
 * both show on the file as `waiting`.
 */

import type { FerryFile, Waiting } from '../types.ts';
import {
  type CancelContext,
  type UploadContext,
  type Uploader,
  UploaderError,
  type UploadResult,
} from '../uploader.ts';
import {
  base,
  type FetchLike,
  ProviderAuthError,
  ProviderRateLimitError,
  ProviderRequestError,
  type SocketFactory,
  type SocketLike,
  withAccessToken,
} from './http.ts';
import { countdown, MAX_WAIT_SECONDS, retryAfterLimits, stillLimitedMessage } from './provider-wait.ts';

/** What `POST /url/meta` answers. */
export interface UrlMeta {
  name: string;
  type: string;
  size: number | null;
}

/** Asks the companion at `companionUrl` for the name, type and size of `url`. */
export async function urlMeta(
  companionUrl: string,
  url: string,
  fetchImpl: FetchLike = fetch,
  headers: Record<string, string> = {},
): Promise<UrlMeta> {
  const res = await fetchImpl(`${base(companionUrl)}/url/meta`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ url }),
  });
  const body = (await res.json().catch(() => ({}))) as Partial<UrlMeta> & {
    message?: string;
    error?: string | { message?: string };
  };
  // Companion can answer 200 with an `error` field: that is a failed fetch too (spec §8).
  if (!res.ok || body.error) {
    const reason = typeof body.error === 'string' ? body.error : body.error?.message;
    throw new UploaderError(body.message ?? reason ?? 'Failed to fetch the file', {
      status: res.status,
      retryable: false,
    });
  }
  return { name: body.name ?? 'untitled', type: body.type ?? '', size: body.size ?? null };
}

/** The companion a remote file goes through: its own (`remote.companionUrl`), else the engine's. */
function companionOf(file: FerryFile, ctx: Pick<UploadContext, 'companionUrl'>): string | undefined {
  return file.remote?.companionUrl ?? ctx.companionUrl;
}

/** Where the companion sends the bytes, in Companion's upload-body fields. */
export interface RemoteUploaderOptions {
  /** `tus` (default) or `multipart`. */
  protocol?: 'tus' | 'multipart';
  /** The destination: a tus creation URL or a form endpoint (resolved against the page). */
  endpoint: string;
  fieldname?: string;
  httpMethod?: 'POST' | 'PUT';
  useFormData?: boolean;
  /** Headers the companion forwards to the destination. */
  headers?: Record<string, string>;
  fetch?: FetchLike;
  socket?: SocketFactory;
}

interface Frame {
  action?: string;
  payload?: {
    progress?: string;
    bytesUploaded?: number;
    bytesTotal?: number;
    retryAfter?: number;
    message?: string;
    url?: string;
    response?: { responseText?: string; status?: number };
    error?: { message?: string };
  };
}

/**
 * The path of `url` when it is a route of `companion` (Companion's `remote.url`, such as
 * `{companion}/google-picker/get` for a picked file), else null: the body only ever goes to the
 * file's own companion.
 */
export function routeOn(companion: string, url: string | undefined): string | null {
  if (!url?.startsWith(`${companion}/`)) return null;
  return url.slice(companion.length);
}

/** Uploads remote files through their companion. */
export class RemoteUploader implements Uploader {
  readonly #options: RemoteUploaderOptions;

  constructor(options: RemoteUploaderOptions) {
    this.#options = options;
  }

  async upload(file: FerryFile, ctx: UploadContext): Promise<UploadResult> {
    const remote = file.remote;
    if (!remote) throw new UploaderError('Connection with Companion failed', { retryable: false });
    const resuming = file.serverToken !== undefined;
    const companionUrl = companionOf(file, ctx);
    if (companionUrl === undefined) throw new UploaderError(ctx.i18n('companionError'), { retryable: false });
    const companion = base(companionUrl);
    const token = file.serverToken ?? (await this.#start(file, companion, ctx));
    if (!resuming) ctx.patchFile({ serverToken: token });
    return this.#follow(companion, token, resuming, ctx, ctx.headers ? await ctx.headers() : {});
  }

  /** Cancels the server-side transfer of a file that is not running (removed while paused). */
  async cancel(file: FerryFile, context: CancelContext): Promise<void> {
    const companionUrl = companionOf(file, context);
    if (!file.remote || file.serverToken === undefined || companionUrl === undefined) return;
    // Without engine headers the socket opens at once (nothing to wait for).
    const headers = context.headers ? await context.headers() : {};
    const socket = this.#open(base(companionUrl), file.serverToken, headers);
    await new Promise<void>((resolve) => {
      socket.onopen = () => {
        socket.send(JSON.stringify({ action: 'cancel', payload: {} }));
        socket.close();
        resolve();
      };
      socket.onerror = () => resolve();
    });
  }

  async #start(file: FerryFile, companion: string, ctx: UploadContext): Promise<string> {
    const remote = file.remote;
    if (!remote) throw new UploaderError('Connection with Companion failed', { retryable: false });
    const o = this.#options;
    const endpoint = typeof location === 'undefined' ? o.endpoint : new URL(o.endpoint, location.href).href;
    const body = {
      ...remote.body,
      // Companion's wire: the provider's id of the file (the list item's `id`, which a provider
      // file carries in `remote.body`); the engine's id only for files that have none (links).
      fileId: remote.body.fileId ?? file.id,
      protocol: o.protocol ?? 'tus',
      endpoint,
      size: file.size,
      metadata: { ...file.meta, name: file.name, type: file.type },
      headers: o.headers ?? {},
      ...(o.fieldname ? { fieldname: o.fieldname } : {}),
      ...(o.httpMethod ? { httpMethod: o.httpMethod } : {}),
      ...(o.useFormData !== undefined ? { useFormData: o.useFormData } : {}),
    };
    const provider = remote.providerName;
    // The provider's client on the file's companion: its token is that companion's.
    const client = provider === undefined ? undefined : ctx.providerClient?.(provider, remote.companionUrl);
    let res: Response;
    try {
      if (provider !== undefined && client !== undefined) {
        // Through the provider's client: its token, one shared refresh on 401, and the provider's
        // rate limit waited out on the file (`waiting`) before the request goes again.
        const path = `get/${remote.requestPath ?? encodeURIComponent(String(remote.body.id ?? ''))}`;
        const init = { method: 'POST', body: JSON.stringify(body), signal: ctx.signal };
        res = await retryAfterLimits(() => client.request(path, init), {
          signal: ctx.signal,
          onWait: (waiting) => ctx.patchFile({ waiting: waiting ?? undefined }),
        });
      } else {
        const path = provider
          ? `/${provider}/get/${remote.requestPath ?? encodeURIComponent(String(remote.body.id ?? ''))}`
          : (routeOn(companion, remote.url) ?? '/url/get');
        res = await (o.fetch ?? fetch)(`${companion}${path}`, {
          method: 'POST',
          // Without engine headers nothing is awaited: the request goes out at once.
          headers: {
            ...(ctx.headers ? await ctx.headers() : {}),
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify(body),
          signal: ctx.signal,
        });
      }
    } catch (cause) {
      if (cause instanceof ProviderAuthError) {
        throw new UploaderError(ctx.i18n('authRequired'), { status: 401, retryable: false, cause });
      }
      // Still limited after the waits: a final message (the 429's says it is retrying), no more tries.
      if (cause instanceof ProviderRateLimitError) {
        const name = client?.name ?? provider ?? '';
        throw new UploaderError(stillLimitedMessage(name, ctx.i18n), { status: 429, retryable: false, cause });
      }
      if (ctx.signal.aborted) throw new UploaderError('aborted', { retryable: false, cause });
      if (cause instanceof ProviderRequestError) {
        throw new UploaderError(cause.message, {
          status: cause.status,
          retryable: cause.status >= 500 || cause.status === 429,
          cause,
        });
      }
      throw new UploaderError(ctx.i18n('companionError'), { cause });
    }
    const answer = (await res.json().catch(() => ({}))) as { token?: string; message?: string };
    if (!res.ok || !answer.token) {
      throw new UploaderError(answer.message ?? ctx.i18n('companionError'), {
        status: res.status,
        retryable: res.status >= 500 || res.status === 429,
      });
    }
    return answer.token;
  }

  /** The progress socket; a browser cannot set its headers, so a bearer token rides as `access_token`. */
  #open(companion: string, token: string, headers: Record<string, string>): SocketLike {
    const url = withAccessToken(`${companion.replace(/^http/, 'ws')}/api/${token}`, headers);
    return this.#options.socket ? this.#options.socket(url) : (new WebSocket(url) as unknown as SocketLike);
  }

  #follow(
    companion: string,
    token: string,
    resuming: boolean,
    ctx: UploadContext,
    headers: Record<string, string>,
  ): Promise<UploadResult> {
    const socket = this.#open(companion, token, headers);
    const send = (action: string) => {
      if (socket.readyState === 1) socket.send(JSON.stringify({ action, payload: {} }));
    };
    // The companion waiting out a rate limit in place: counted down here until bytes move again.
    let wait: AbortController | null = null;
    let waits = 0;
    const stopWaiting = () => {
      if (wait === null) return;
      wait.abort();
      wait = null;
      ctx.patchFile({ waiting: undefined });
    };
    const startWaiting = (retryAfter: number, message: string) => {
      stopWaiting();
      waits += 1;
      const controller = new AbortController();
      wait = controller;
      const waiting: Waiting = { seconds: retryAfter, retryAfter, message, attempt: waits };
      countdown(waiting, {
        signal: controller.signal,
        onWait: (w) => {
          if (!controller.signal.aborted) ctx.patchFile({ waiting: w ?? undefined });
        },
      }).catch(() => undefined);
    };
    return new Promise<UploadResult>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        stopWaiting();
        ctx.signal.removeEventListener('abort', onAbort);
        socket.close();
        fn();
      };
      const onAbort = () => {
        send(ctx.reason() === 'pause' ? 'pause' : 'cancel');
        finish(() => reject(new UploaderError('aborted', { retryable: false })));
      };
      if (ctx.signal.aborted) {
        onAbort();
        return;
      }
      ctx.signal.addEventListener('abort', onAbort);
      socket.onopen = () => {
        if (resuming) send('resume');
      };
      socket.onerror = () => finish(() => reject(new UploaderError(ctx.i18n('companionError'))));
      socket.onclose = () => finish(() => reject(new UploaderError(ctx.i18n('companionError'))));
      socket.onmessage = (ev) => {
        let frame: Frame;
        try {
          frame = JSON.parse(String(ev.data)) as Frame;
        } catch {
          return;
        }
        const p = frame.payload ?? {};
        if (frame.action === 'progress') {
          stopWaiting();
          ctx.onProgress(p.bytesUploaded ?? 0, p.bytesTotal ? p.bytesTotal : null);
        } else if (frame.action === 'waiting') {
          const seconds = typeof p.retryAfter === 'number' && p.retryAfter >= 0 ? Math.ceil(p.retryAfter) : 0;
          startWaiting(Math.min(seconds, MAX_WAIT_SECONDS), p.message ?? '');
        } else if (frame.action === 'success') {
          const text = p.response?.responseText;
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = text;
          }
          finish(() =>
            resolve({
              ...(p.url ? { uploadURL: p.url } : {}),
              ...(parsed !== undefined ? { body: parsed } : {}),
              status: p.response?.status ?? 200,
            }),
          );
        } else if (frame.action === 'error') {
          const message = p.error?.message ?? ctx.i18n('uploadError');
          finish(() => reject(new UploaderError(message, { retryable: false })));
        }
      };
    });
  }
}
