/**
 * The client of one cloud provider (`drive`, `instagram`...) behind a companion, on Companion's
 * wire protocol (`shared/reference/providers.md` §1): the sealed auth token is kept per provider
 * and sent as `uppy-auth-token`; `list(path)` reads `/{p}/list/{path}` (paths and `nextPagePath`
 * are opaque and used verbatim); a 401 triggers ONE `POST /{p}/refresh-token` shared by every
 * request waiting on it, then one retry; `logout()` revokes and forgets. Login is the popup of
 * `provider-login.ts`. Token persistence is opt-in: with a `storage`, the token is kept under
 * `ferry-provider-token:{companion}:{provider}` (see {@link tokenKey}). A search provider
 * (Unsplash) has no token: its routes are `/search/{p}/list?q=` and `/search/{p}/get/{id}`. A 429
 * throws {@link ProviderRateLimitError} with the seconds to wait (`provider-wait.ts` waits them).
 */

import {
  base,
  type FetchLike,
  ProviderAuthError,
  ProviderRateLimitError,
  ProviderRequestError,
  retryAfterOf,
  withAccessToken,
} from './http.ts';
import { type LoginEnv, popupLogin } from './provider-login.ts';
import { retryAfterLimits } from './provider-wait.ts';

/** One entry of a list answer (`ProviderListItem` in Companion). */
export interface ProviderItem {
  isFolder: boolean;
  /** `file`, `folder`, `video` (keywords) or an image URL. */
  icon?: string | null;
  id: string;
  name: string;
  /** The key of the item: the argument of `/list/` for folders and of `/get/` for files. */
  requestPath: string;
  modifiedDate?: string | null;
  mimeType?: string | null;
  /** Bytes; null or 0 when the provider does not say (Google Docs, Instagram). */
  size?: number | null;
  /** A URL a plain `<img>` can load. */
  thumbnail?: string | null;
  custom?: Record<string, unknown> & { isSharedDrive?: boolean; unsupported?: boolean; unsupportedReason?: string };
  /** A search result's photographer (Unsplash), for the attribution its guidelines require. */
  author?: { name: string; url: string } | null;
}

/** One page of a folder. `nextPagePath` is the argument of the next `list()`, null on the last. */
export interface ProviderPage {
  username: string | null;
  items: ProviderItem[];
  nextPagePath: string | null;
}

/** What `/{p}/logout` answers. */
export interface LogoutAnswer {
  ok: boolean;
  revoked: boolean;
  manual_revoke_url?: string;
}

/** Where tokens persist (`localStorage` fits); absent means memory only. */
export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface ProviderClientOptions {
  companionUrl: string;
  /** The provider id on the companion's paths: `drive`, `instagram`. */
  id: string;
  /** Its display name (`Google Drive`), for messages; the id when absent. */
  name?: string;
  /** Whether a 401 may be answered by `/refresh-token` (default true). */
  supportsRefreshToken?: boolean;
  /** A search provider: no sign-in, routes under `/search/{id}/` (Companion's paths). */
  search?: boolean;
  fetch?: FetchLike;
  storage?: TokenStorage | null;
  /** Popup, message and socket plumbing of the login (fakes in tests). */
  login?: Partial<LoginEnv>;
  /** The engine's headers (`FerryOptions.headers`), sent with every request. */
  headers?: () => Promise<Record<string, string>>;
}

/** The storage key of a provider's token for a companion. */
export function tokenKey(companionUrl: string, id: string): string {
  return `ferry-provider-token:${base(companionUrl)}:${id}`;
}

type Listener = () => void;

export class ProviderClient {
  readonly id: string;
  readonly companionUrl: string;
  readonly #options: ProviderClientOptions;
  #token: string | null;
  /** The refresh in flight, shared by every request that got a 401 with the same token. */
  #refreshing: { from: string; done: Promise<string> } | null = null;
  readonly #listeners = new Set<Listener>();

  constructor(options: ProviderClientOptions) {
    this.#options = options;
    this.id = options.id;
    this.companionUrl = base(options.companionUrl);
    this.#token = options.storage?.getItem(tokenKey(this.companionUrl, this.id)) ?? null;
  }

  /** The display name (`Google Drive`), for messages. */
  get name(): string {
    return this.#options.name ?? this.id;
  }

  /** Whether this is a search provider (no sign-in; {@link search} instead of folders). */
  get searchable(): boolean {
    return this.#options.search === true;
  }

  /** The sealed token, null when not connected. */
  get token(): string | null {
    return this.#token;
  }

  /** Calls `listener` whenever the token appears, changes or goes. */
  onTokenChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  setToken(token: string | null): void {
    if (token === this.#token) return;
    this.#token = token;
    const storage = this.#options.storage;
    const key = tokenKey(this.companionUrl, this.id);
    if (storage) {
      if (token === null) storage.removeItem(key);
      else storage.setItem(key, token);
    }
    for (const l of this.#listeners) l();
  }

  /**
   * Opens the companion's consent popup and keeps the token it hands back. Call it from a click
   * handler: the popup is opened synchronously, before anything is awaited (popup blockers).
   */
  async login(): Promise<void> {
    const token = await popupLogin(this.companionUrl, this.id, this.#options.login);
    this.setToken(token);
  }

  /**
   * Signs in with a form (`POST /{p}/simple-auth`, Companion's route; WebDAV's `webdavUrl`,
   * `username`, `password`) and keeps the token it answers. A refusal throws
   * {@link ProviderRequestError} with the companion's message (a bad URL, an address its egress
   * rules refuse, wrong credentials), so the person sees why.
   */
  async simpleAuth(form: Record<string, string>): Promise<void> {
    const res = await this.#send('simple-auth', { method: 'POST', body: JSON.stringify({ form }) }, null);
    const body = (await res.json().catch(() => null)) as { uppyAuthToken?: unknown; message?: unknown } | null;
    if (res.status === 429)
      throw new ProviderRateLimitError(messageIn(body, 429), retryAfterOf(res.headers.get('retry-after'), body));
    if (!res.ok) throw new ProviderRequestError(messageIn(body, res.status), res.status);
    if (typeof body?.uppyAuthToken !== 'string' || body.uppyAuthToken === '') {
      throw new ProviderRequestError('The companion answered no token', res.status);
    }
    this.setToken(body.uppyAuthToken);
  }

  /** One page of the folder at `path` (a `requestPath`, a `nextPagePath`, or '' for the default). */
  async list(path = ''): Promise<ProviderPage> {
    const res = await this.request(`list/${path}`);
    const body = (await res.json()) as Partial<ProviderPage>;
    return {
      username: body.username ?? null,
      items: await this.#items(body.items),
      nextPagePath: body.nextPagePath || null,
    };
  }

  /**
   * One page of a search provider's results for `query`; `next` is the previous page's
   * `nextPagePath` (Companion's `nextPageQuery`, `cursor=2`, appended verbatim).
   */
  async search(query: string, next: string | null = null): Promise<ProviderPage> {
    const res = await this.request(`list?q=${encodeURIComponent(query)}${next ? `&${next}` : ''}`);
    const body = (await res.json()) as { items?: ProviderItem[]; nextPageQuery?: string | null };
    return { username: null, items: await this.#items(body.items), nextPagePath: body.nextPageQuery || null };
  }

  async #items(items: ProviderItem[] | undefined): Promise<ProviderItem[]> {
    if (!Array.isArray(items)) return [];
    // Thumbnails served by the companion are `<img>` sources, which carry no headers: they get
    // the engine's bearer token as `access_token` (only when the engine has one).
    const headers = (await this.#options.headers?.()) ?? {};
    const own = `${base(this.companionUrl)}/`;
    return items.map((item) =>
      item.thumbnail?.startsWith(own) ? { ...item, thumbnail: withAccessToken(item.thumbnail, headers) } : item,
    );
  }

  /**
   * Every page of a folder, in order, following `nextPagePath` to the end; a rate-limited page is
   * asked again after its `Retry-After` (within `provider-wait.ts`'s bounds).
   */
  async *pages(path = '', signal?: AbortSignal): AsyncGenerator<ProviderPage> {
    let next: string | null = path;
    while (next !== null) {
      signal?.throwIfAborted();
      const at: string = next;
      const page: ProviderPage = await retryAfterLimits(() => this.list(at), { signal });
      yield page;
      next = page.nextPagePath;
    }
  }

  /** Revokes the token at the provider when it can, and forgets it here whatever the answer. */
  async logout(): Promise<LogoutAnswer> {
    try {
      const res = await this.request('logout', { method: 'GET' }, false);
      return (await res.json()) as LogoutAnswer;
    } finally {
      this.setToken(null);
    }
  }

  /**
   * A request to `/{p}/{path}` with the token. On 401 it waits for the one shared refresh (or
   * uses a token a concurrent refresh already brought) and retries once; when no token can be
   * had it forgets the token and throws {@link ProviderAuthError}. A 429 throws
   * {@link ProviderRateLimitError} with its `Retry-After`; other failures throw
   * {@link ProviderRequestError} with the companion's message.
   */
  async request(path: string, init: RequestInit = {}, refresh = true): Promise<Response> {
    let used = this.#token;
    let res = await this.#send(path, init, used);
    if (res.status === 401 && refresh) {
      const fresh = await this.#tokenAfter(used);
      if (fresh !== null) {
        used = fresh;
        res = await this.#send(path, init, fresh);
      }
    }
    if (res.status === 401) {
      // Only the token this request was refused with is dropped: a newer one may be good.
      if (this.#token === used) this.setToken(null);
      throw new ProviderAuthError();
    }
    if (res.status === 429) {
      const body = await res.json().catch(() => null);
      throw new ProviderRateLimitError(messageIn(body, res.status), retryAfterOf(res.headers.get('retry-after'), body));
    }
    if (!res.ok) throw new ProviderRequestError(messageIn(await res.json().catch(() => null), res.status), res.status);
    return res;
  }

  /** A good token after `used` was refused: a newer one, or the result of the shared refresh. */
  async #tokenAfter(used: string | null): Promise<string | null> {
    if (this.#token !== used) return this.#token;
    if (used === null || this.#options.supportsRefreshToken === false) return null;
    if (this.#refreshing?.from !== used) {
      const done = this.#refresh(used);
      this.#refreshing = { from: used, done };
      const clear = () => {
        if (this.#refreshing?.done === done) this.#refreshing = null;
      };
      done.then(clear, clear);
    }
    return this.#refreshing.done.catch(() => null);
  }

  async #refresh(used: string): Promise<string> {
    const res = await this.#send('refresh-token', { method: 'POST' }, used);
    const body = (await res.json().catch(() => ({}))) as { uppyAuthToken?: string };
    if (!res.ok || !body.uppyAuthToken) {
      if (this.#token === used) this.setToken(null);
      throw new ProviderAuthError();
    }
    if (this.#token === used) this.setToken(body.uppyAuthToken);
    return body.uppyAuthToken;
  }

  async #send(path: string, init: RequestInit, token: string | null): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...(await this.#options.headers?.()) };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (token !== null) headers['uppy-auth-token'] = token;
    const route = this.searchable ? `search/${this.id}` : this.id;
    return (this.#options.fetch ?? fetch)(`${this.companionUrl}/${route}/${path}`, {
      ...init,
      headers: { ...headers, ...(init.headers as Record<string, string> | undefined) },
    });
  }
}

function messageIn(body: unknown, status: number): string {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : `Request failed with status ${status}`;
}
