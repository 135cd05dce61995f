/**
 * Google's pickers as a source, framework-free (React only renders the state): the page picks
 * with Google and the companion imports what was picked (`POST /google-picker/get`, Companion's
 * route and body: `platform`, `accessToken`, `fileId`, for Photos the media `url` and
 * `sessionId`), so nobody signs in to the companion and the app needs no restricted scope.
 *
 * - Drive: a `drive.file` token from Google Identity Services, then Google's Drive Picker; each
 *   picked document becomes a remote file.
 * - Photos: a Photos Picker token, then a picking session (`POST /v1/sessions`) whose page
 *   (`pickerUri`) the person opens in a new tab; the session is polled at Google's interval,
 *   within its `timeoutIn`, until `mediaItemsSet`, then its media items (paged) become remote
 *   files (`{baseUrl}=d` for photos, `=dv` for videos) and the session is deleted.
 *
 * The token is kept in memory for its hour, so a second pick asks Google nothing.
 */
import { Store } from '../store.ts';
import type { FileDescriptor } from '../types.ts';
import {
  browserGoogleEnv,
  type GoogleEnv,
  type GoogleToken,
  type GoogleUrls,
  googleUrls,
  type PickedDoc,
  pickerScopes,
} from './google-env.ts';
import { base, type FetchLike } from './http.ts';

/** The page's Google app, from the Google Cloud console (`new Ferry({ providerOptions: { googlePicker } })`). */
export interface GooglePickerOptions {
  /** The OAuth client id (both pickers). */
  clientId: string;
  /** The API key (the Drive Picker). */
  apiKey?: string;
  /** The Cloud project number (the Drive Picker's app id, so `drive.file` covers what was picked). */
  appId?: string;
  /** Google's script and API URLs, for a proxy; Google's own by default. */
  urls?: Partial<GoogleUrls>;
}

export type PickerKind = 'drive' | 'photos';

/** The provider ids of the pickers, as `GET /providers` names them (Uppy's plugin ids). */
export const pickerIds: Readonly<Record<PickerKind, string>> = {
  drive: 'google-drive-picker',
  photos: 'google-photos-picker',
};

/** Whether `options` has what the `kind` picker needs. */
export function pickerConfigured(kind: PickerKind, options: GooglePickerOptions | undefined): boolean {
  if (!options?.clientId) return false;
  return kind === 'photos' || (Boolean(options.apiKey) && Boolean(options.appId));
}

export interface PickerState {
  /** `authorizing`: asking Google for a token; `picking`: Google's dialog or tab is open. */
  status: 'idle' | 'authorizing' | 'picking' | 'adding' | 'error';
  error: string | null;
  /** Photos: the open session's page, for the person to open in a tab. */
  pickerUri: string | null;
}

/** What the picker needs from the engine (a `Ferry` fits). */
export interface PickerHost {
  addFiles(descriptors: Iterable<FileDescriptor>): string[];
  i18n(key: string, vars?: Record<string, string | number>): string;
}

export interface PickerDeps {
  companionUrl: string;
  fetch?: FetchLike;
  env?: GoogleEnv;
}

/** A Photos Picker session, as far as it is read. */
interface Session {
  id: string;
  pickerUri: string;
  pollingConfig?: { pollInterval?: string; timeoutIn?: string };
  mediaItemsSet?: boolean;
}

/** A Photos Picker media item, as far as it is read. */
interface MediaItem {
  id: string;
  type?: string;
  mediaFile?: { baseUrl?: string; mimeType?: string; filename?: string };
}

/** Seconds of a Google duration (`"5s"`, `"1.5s"`); `fallback` when unreadable. */
export function seconds(duration: string | undefined, fallback: number): number {
  const n = Number.parseFloat(duration ?? '');
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

export class GooglePicker {
  readonly kind: PickerKind;
  readonly name: string;
  readonly #options: GooglePickerOptions;
  readonly #host: PickerHost;
  readonly #deps: PickerDeps;
  readonly #store = new Store<PickerState, Partial<PickerState>>(
    { status: 'idle', error: null, pickerUri: null },
    (s, patch) => ({ ...s, ...patch }),
  );
  #token: GoogleToken | null = null;
  #abort: AbortController | null = null;

  constructor(kind: PickerKind, name: string, options: GooglePickerOptions, host: PickerHost, deps: PickerDeps) {
    this.kind = kind;
    this.name = name;
    this.#options = options;
    this.#host = host;
    this.#deps = deps;
  }

  getState = (): PickerState => this.#store.getState();
  subscribe = (listener: (state: PickerState) => void): (() => void) => this.#store.subscribe(listener);

  get #urls(): GoogleUrls {
    return { ...googleUrls, ...this.#options.urls };
  }

  get #env(): GoogleEnv {
    return this.#deps.env ?? browserGoogleEnv;
  }

  /** Loads Google's scripts ahead of the click, so the token popup opens inside it. */
  prepare(): Promise<void> {
    return this.#env.load(this.kind, this.#urls).catch((error: unknown) => {
      this.#set({ status: 'error', error: (error as Error).message });
    });
  }

  /**
   * Runs one pick (call from a click): a token, Google's picker, then the picked files added as
   * remote files. The number added (0 when cancelled or failed; the state says why).
   */
  async pick(): Promise<number> {
    this.cancel();
    const abort = new AbortController();
    this.#abort = abort;
    this.#set({ status: 'authorizing', error: null, pickerUri: null });
    try {
      await this.#env.load(this.kind, this.#urls);
      const token = await this.#accessToken();
      abort.signal.throwIfAborted();
      this.#set({ status: 'picking' });
      const files = this.kind === 'drive' ? await this.#pickDrive(token) : await this.#pickPhotos(token, abort.signal);
      if (files === null) {
        this.#set({ status: 'idle', pickerUri: null });
        return 0;
      }
      this.#set({ status: 'adding', pickerUri: null });
      const added = this.#host.addFiles(files).length;
      this.#set({ status: 'idle' });
      return added;
    } catch (error) {
      if (abort.signal.aborted) return 0;
      this.#set({ status: 'error', error: (error as Error).message, pickerUri: null });
      return 0;
    } finally {
      if (this.#abort === abort) this.#abort = null;
    }
  }

  /** Stops a pick in progress (the Photos session stops being polled). */
  cancel(): void {
    this.#abort?.abort();
    this.#abort = null;
    if (this.getState().status !== 'error') this.#set({ status: 'idle', pickerUri: null });
  }

  async #accessToken(): Promise<string> {
    if (this.#token && this.#token.expiresAt > Date.now()) return this.#token.accessToken;
    this.#token = await this.#env.requestToken(this.#options.clientId, pickerScopes[this.kind]);
    return this.#token.accessToken;
  }

  async #pickDrive(token: string): Promise<FileDescriptor[] | null> {
    const docs = await this.#env.showDrivePicker({
      token,
      apiKey: this.#options.apiKey ?? '',
      appId: this.#options.appId ?? '',
    });
    if (docs === null) return null;
    return docs.map((doc) => this.#descriptor(doc, { platform: 'drive', fileId: doc.id, accessToken: token }));
  }

  async #pickPhotos(token: string, signal: AbortSignal): Promise<FileDescriptor[] | null> {
    const session = await this.#photos<Session>('POST', '/v1/sessions', token, signal);
    this.#set({ pickerUri: session.pickerUri });
    const every = Math.max(1, seconds(session.pollingConfig?.pollInterval, 5));
    // Google's bound on the session; the poll stops there whatever happens.
    const until = Date.now() + seconds(session.pollingConfig?.timeoutIn, 1800) * 1000;
    const path = `/v1/sessions/${encodeURIComponent(session.id)}`;
    for (;;) {
      await sleep(every * 1000, signal);
      const now = await this.#photos<Session>('GET', path, token, signal);
      if (now.mediaItemsSet) break;
      if (Date.now() >= until) throw new Error(this.#host.i18n('pickerTimedOut'));
    }
    const items: MediaItem[] = [];
    let pageToken = '';
    do {
      const query = new URLSearchParams({ sessionId: session.id, pageSize: '100' });
      if (pageToken) query.set('pageToken', pageToken);
      const page = await this.#photos<{ mediaItems?: MediaItem[]; nextPageToken?: string }>(
        'GET',
        `/v1/mediaItems?${query}`,
        token,
        signal,
      );
      items.push(...(page.mediaItems ?? []));
      pageToken = page.nextPageToken ?? '';
    } while (pageToken);
    // The items are read: the session has done its job (Google asks apps to delete them).
    await this.#photos('DELETE', path, token, signal).catch(() => undefined);
    return items
      .filter((item) => item.mediaFile?.baseUrl)
      .map((item) => {
        const file = item.mediaFile ?? {};
        const url = `${file.baseUrl}=${item.type === 'VIDEO' ? 'dv' : 'd'}`;
        const doc = { id: item.id, name: file.filename, mimeType: file.mimeType };
        const meta = item.type ? { googlePhotosFileType: item.type } : undefined;
        return this.#descriptor(
          doc,
          { platform: 'photos', fileId: item.id, accessToken: token, url, sessionId: session.id },
          meta,
        );
      });
  }

  async #photos<T>(method: string, path: string, token: string, signal: AbortSignal): Promise<T> {
    const res = await (this.#deps.fetch ?? fetch)(`${base(this.#urls.photos)}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      signal,
    });
    const body = (await res.json().catch(() => ({}))) as T & { error?: { message?: string; status?: string } };
    if (res.status === 401) this.#token = null;
    if (!res.ok) throw new Error(body.error?.message ?? `Google Photos answered ${res.status}`);
    return body;
  }

  /** The remote file of a picked item: the companion imports it through `/google-picker/get`. */
  #descriptor(doc: PickedDoc, body: Record<string, unknown>, meta?: Record<string, string>): FileDescriptor {
    const size = Number(doc.sizeBytes);
    return {
      isRemote: true,
      source: pickerIds[this.kind],
      name: doc.name || doc.id,
      type: doc.mimeType || 'application/octet-stream',
      size: Number.isFinite(size) && size > 0 ? size : null,
      data: null,
      ...(meta ? { meta } : {}),
      remote: { url: `${base(this.#deps.companionUrl)}/google-picker/get`, body },
    };
  }

  #set(patch: Partial<PickerState>): void {
    this.#store.dispatch(patch);
  }
}

/** Resolves after `ms`, rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal.throwIfAborted();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}
