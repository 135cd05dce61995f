/**
 * The engine's providers: one {@link ProviderClient} and one {@link ProviderBrowser} per provider
 * id, made on first use against the engine's companion, so the uploader (which sends
 * `/{p}/get/...` with the token) and the browser share one token and one refresh. Also which
 * providers exist: the known ones (Companion's ids) with their names and roots, and what a
 * companion says it enables (`GET /providers` on `ferry`; a companion without that route, such
 * as a stock Companion, enables none as far as discovery goes, so pages name them instead).
 * Google's pickers are listed too when the companion enables them and the page has its Google app
 * (`googlePicker`); each has one {@link GooglePicker}.
 */

import type { GoogleEnv } from './google-env.ts';
import { GooglePicker, type GooglePickerOptions, pickerConfigured } from './google-picker.ts';
import { base, type FetchLike } from './http.ts';
import { ProviderClient, type TokenStorage } from './provider.ts';
import { type BrowserHost, ProviderBrowser } from './provider-browser.ts';
import type { LoginEnv } from './provider-login.ts';

/** What the widget needs to know about a provider. */
export interface ProviderInfo {
  id: string;
  /** Display name: `Google Drive`. */
  name: string;
  /** The folder listed first: `root` (Drive), `recent` (Instagram). */
  rootFolder: string;
  supportsRefreshToken: boolean;
  /** A search provider (Unsplash): no sign-in, a query instead of folders. */
  search?: boolean;
  /** Signs in with a form (WebDAV: the server URL, maybe a username and app password), not a popup. */
  simpleAuth?: boolean;
  /** One of Google's pickers: the page picks with Google, the companion imports (`picker(id)`). */
  picker?: 'drive' | 'photos';
}

/** The providers the widget knows without asking (Companion's ids and roots). */
export const knownProviders: Readonly<Record<string, ProviderInfo>> = {
  drive: { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
  // Released Companion cannot refresh Instagram tokens; `ferry` says it can in GET /providers.
  instagram: { id: 'instagram', name: 'Instagram', rootFolder: 'recent', supportsRefreshToken: false },
  // Dropbox's root is the empty path, as on Companion and `ferry`.
  dropbox: { id: 'dropbox', name: 'Dropbox', rootFolder: '', supportsRefreshToken: true },
  // Box's root folder is `0` on both; released Companion has no Box refresh (its /refresh-token
  // then fails and the person signs in again, as without one), `ferry` rotates Box tokens.
  box: { id: 'box', name: 'Box', rootFolder: '0', supportsRefreshToken: true },
  // `ferry` names OneDrive's top level `root` and also lists it for ''; Companion only for ''.
  onedrive: { id: 'onedrive', name: 'OneDrive', rootFolder: '', supportsRefreshToken: true },
  unsplash: { id: 'unsplash', name: 'Unsplash', rootFolder: '', supportsRefreshToken: false, search: true },
  zoom: { id: 'zoom', name: 'Zoom', rootFolder: '', supportsRefreshToken: true },
  // Facebook has no refresh tokens: an expired token means signing in again.
  facebook: { id: 'facebook', name: 'Facebook', rootFolder: '', supportsRefreshToken: false },
  // The person types the server URL (`POST /webdav/simple-auth`); the token is the sealed form.
  webdav: { id: 'webdav', name: 'WebDAV', rootFolder: '', supportsRefreshToken: false, simpleAuth: true },
  'google-drive-picker': {
    id: 'google-drive-picker',
    name: 'Google Drive Picker',
    rootFolder: '',
    supportsRefreshToken: false,
    picker: 'drive',
  },
  'google-photos-picker': {
    id: 'google-photos-picker',
    name: 'Google Photos Picker',
    rootFolder: '',
    supportsRefreshToken: false,
    picker: 'photos',
  },
};

/** Asks the companion which providers it enables; none when it cannot say. */
export async function enabledProviders(companionUrl: string, fetchImpl: FetchLike = fetch): Promise<ProviderInfo[]> {
  try {
    const res = await fetchImpl(`${base(companionUrl)}/providers`, { headers: { accept: 'application/json' } });
    if (!res.ok) return [];
    type Listed = Omit<Partial<ProviderInfo>, 'picker'> & { picker?: boolean };
    const body = (await res.json()) as { providers?: Listed[] };
    if (!Array.isArray(body.providers)) return [];
    return body.providers
      .filter((p): p is Listed & { id: string } => typeof p?.id === 'string' && p.id !== '')
      .map((p) => {
        const known = knownProviders[p.id];
        const search = p.search ?? known?.search ?? false;
        const simpleAuth = p.simpleAuth ?? known?.simpleAuth ?? false;
        // The companion marks pickers `picker: true`; which one is known by id (an unknown one is left out below).
        const picker = p.picker === true ? known?.picker : undefined;
        return {
          id: p.id,
          name: p.name ?? known?.name ?? p.id,
          rootFolder: p.rootFolder ?? known?.rootFolder ?? '',
          supportsRefreshToken: p.supportsRefreshToken ?? known?.supportsRefreshToken ?? true,
          ...(search ? { search } : {}),
          ...(simpleAuth ? { simpleAuth } : {}),
          ...(picker ? { picker } : {}),
          unknownPicker: p.picker === true && picker === undefined,
        };
      })
      .filter((p) => !p.unknownPicker)
      .map(({ unknownPicker: _, ...info }): ProviderInfo => info);
  } catch {
    return [];
  }
}

/** Engine-wide provider settings (`new Ferry({ providerOptions })`). */
export interface ProvidersOptions {
  /** Keep tokens across reloads (e.g. `localStorage`); memory only by default. */
  storage?: TokenStorage | null;
  fetch?: FetchLike;
  login?: Partial<LoginEnv>;
  /** Headers sent with every provider request (the engine passes `FerryOptions.headers`). */
  headers?: () => Promise<Record<string, string>>;
  /** The page's Google app: without it (or the key and app id for Drive) the pickers stay hidden. */
  googlePicker?: GooglePickerOptions;
  /** Google's side of the pickers (fakes in tests). */
  googleEnv?: GoogleEnv;
}

export class Providers {
  readonly #companionUrl: () => string | undefined;
  readonly #host: BrowserHost;
  readonly #options: ProvidersOptions;
  readonly #info = new Map<string, ProviderInfo>();
  readonly #clients = new Map<string, ProviderClient>();
  readonly #browsers = new Map<string, ProviderBrowser>();
  readonly #pickers = new Map<string, GooglePicker>();
  #discovery: Promise<ProviderInfo[]> | null = null;

  constructor(companionUrl: () => string | undefined, host: BrowserHost, options: ProvidersOptions = {}) {
    this.#companionUrl = companionUrl;
    this.#host = host;
    this.#options = options;
  }

  /** What the companion enables (asked once); a picker only when the page has its Google app. */
  discover(): Promise<ProviderInfo[]> {
    const url = this.#companionUrl();
    if (url === undefined) return Promise.resolve([]);
    this.#discovery ??= enabledProviders(url, this.#options.fetch).then((all) => {
      const list = all.filter((p) => this.usable(p));
      for (const info of list) if (!this.#clients.has(info.id)) this.#info.set(info.id, info);
      return list;
    });
    return this.#discovery;
  }

  /** Whether this page can offer `info`: a picker needs the page's Google app (`googlePicker`). */
  usable(info: ProviderInfo): boolean {
    return info.picker === undefined || pickerConfigured(info.picker, this.#options.googlePicker);
  }

  /** What is known about `id`: the companion's answer, else the built-in entry, else a guess. */
  info(id: string): ProviderInfo {
    return this.#info.get(id) ?? knownProviders[id] ?? { id, name: id, rootFolder: '', supportsRefreshToken: true };
  }

  /**
   * The client of `id` on `companionUrl` (a file's own companion), else on the engine's; throws
   * when neither is set. Clients are kept per companion and provider, so they share a token.
   */
  client(id: string, companionUrl = this.#companionUrl()): ProviderClient {
    if (companionUrl === undefined) throw new Error('No companionUrl is set');
    // The engine's companion keys by id alone: its clients are the browsers' ones too.
    const engine = this.#companionUrl();
    const key = engine !== undefined && base(engine) === base(companionUrl) ? id : `${base(companionUrl)} ${id}`;
    let client = this.#clients.get(key);
    if (!client) {
      client = new ProviderClient({
        companionUrl,
        id,
        name: this.info(id).name,
        supportsRefreshToken: this.info(id).supportsRefreshToken,
        search: this.info(id).search === true,
        fetch: this.#options.fetch,
        storage: this.#options.storage,
        login: this.#options.login,
        headers: this.#options.headers,
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  /** The Google picker `id` (`google-drive-picker`, `google-photos-picker`), kept like browsers. */
  picker(id: string): GooglePicker {
    let picker = this.#pickers.get(id);
    if (!picker) {
      const info = this.info(id);
      const companionUrl = this.#companionUrl();
      const options = this.#options.googlePicker;
      if (!info.picker || companionUrl === undefined || !options) {
        throw new Error(`${id} is not a Google picker this page can open (set companionUrl and googlePicker)`);
      }
      picker = new GooglePicker(info.picker, info.name, options, this.#host, {
        companionUrl,
        fetch: this.#options.fetch,
        env: this.#options.googleEnv,
      });
      this.#pickers.set(id, picker);
    }
    return picker;
  }

  /** The browser of `id` (kept, so leaving and coming back keeps the folder and selection). */
  browser(id: string): ProviderBrowser {
    let browser = this.#browsers.get(id);
    if (!browser) {
      const info = this.info(id);
      browser = new ProviderBrowser(this.client(id), this.#host, {
        name: info.name,
        rootFolder: info.rootFolder,
        // Search results are photos: a grid shows them.
        ...(info.search ? { search: true, view: 'grid' as const } : {}),
        ...(info.simpleAuth ? { simpleAuth: true } : {}),
      });
      this.#browsers.set(id, browser);
    }
    return browser;
  }
}
