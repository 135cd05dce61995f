/**
 * A fake companion's provider routes for unit tests, as a `fetch`: `/{p}/list/{path}?cursor=`
 * over a folder tree with pages of `pageSize`, `/{p}/refresh-token`, `/{p}/get/{path}`,
 * `/{p}/logout`; the search provider `unsplash` (`/search/unsplash/list?q=&cursor=` over the
 * tree's `photos`, `/search/unsplash/get/{id}`). Tokens are checked like the real one does
 * (unknown token: 401), and every call is recorded with the token it carried, so tests can count
 * refreshes and see retries. `rateLimited` answers that many list, search or get requests 429
 * with `Retry-After`.
 */
import type { ProviderItem } from '../companion/provider.ts';

export interface FakeCall {
  method: string;
  path: string;
  token: string | null;
  body?: unknown;
}

export interface FakeCompanion {
  fetch: typeof fetch;
  calls: FakeCall[];
  /** Tokens the fake accepts now. */
  valid: Set<string>;
  /** Tokens `/refresh-token` turns into a new one (`refreshed-N`). */
  refreshable: Set<string>;
  /** Resolves pending refreshes (when `holdRefresh` is set). */
  releaseRefresh(): void;
  holdRefresh: boolean;
  /** List, search and get requests still to answer 429 (counted down). */
  rateLimited: number;
  /** The `Retry-After` of those 429s, in seconds. */
  retryAfter: number;
}

export function file(name: string, extra: Partial<ProviderItem> = {}): ProviderItem {
  return {
    isFolder: false,
    id: `id-${name}`,
    name,
    requestPath: `rp-${name}`,
    mimeType: 'text/plain',
    size: 10,
    ...extra,
  };
}

export function folder(name: string, requestPath = `dir-${name}`): ProviderItem {
  return { isFolder: true, id: `id-${name}`, name, requestPath, icon: 'folder' };
}

/** `tree` maps a folder path (`root`, a folder's `requestPath`) to its items. */
export function fakeCompanion(tree: Record<string, ProviderItem[]>, pageSize = 1000, username = 'ada@example.com') {
  let refreshes = 0;
  let held: (() => void)[] = [];
  const fake: FakeCompanion = {
    calls: [],
    valid: new Set(['good']),
    refreshable: new Set(),
    holdRefresh: false,
    rateLimited: 0,
    retryAfter: 12,
    releaseRefresh() {
      const waiting = held;
      held = [];
      for (const go of waiting) go();
    },
    fetch: (async (input: string | URL | Request, init: RequestInit = {}) => {
      const url = new URL(String(input));
      const method = init.method ?? 'GET';
      const headers = (init.headers ?? {}) as Record<string, string>;
      const token = headers['uppy-auth-token'] ?? null;
      const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
      // The companion may live under a base path: the route starts at the provider id.
      const segments = url.pathname.split('/');
      const [provider, route, ...rest] = segments.slice(Math.max(1, segments.indexOf('drive')));
      const path = decodeURIComponent(rest.join('/'));
      fake.calls.push({ method, path: `${url.pathname}${url.search}`, token, ...(body ? { body } : {}) });
      const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status });
      if (url.pathname.endsWith('/providers')) {
        const drive = { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true };
        return new Response(JSON.stringify({ providers: [drive] }));
      }
      const limitable = route === 'list' || route === 'get' || url.pathname.startsWith('/search/');
      if (limitable && fake.rateLimited > 0) {
        fake.rateLimited -= 1;
        return new Response(
          JSON.stringify({ message: 'The provider is rate limiting requests', retryAfter: fake.retryAfter }),
          {
            status: 429,
            headers: { 'retry-after': String(fake.retryAfter) },
          },
        );
      }
      if (url.pathname.startsWith('/search/unsplash/')) return search(url, tree.photos ?? [], pageSize, json);
      if (provider !== 'drive') return json({ message: 'Unknown provider' }, 404);
      if (route === 'logout') return json({ ok: true, revoked: token !== null && fake.valid.has(token) });
      if (route === 'refresh-token') {
        if (fake.holdRefresh) await new Promise<void>((go) => held.push(go));
        if (token === null || !fake.refreshable.has(token)) return new Response('Unauthorized', { status: 401 });
        refreshes += 1;
        const fresh = `refreshed-${refreshes}`;
        fake.valid.add(fresh);
        return json({ uppyAuthToken: fresh });
      }
      if (token === null || !fake.valid.has(token)) return new Response('Unauthorized', { status: 401 });
      if (route === 'get') return json({ token: `transfer-${path}` });
      if (route === 'list') {
        const items = tree[path || 'root'];
        if (!items) return json({ message: 'No such folder' }, 404);
        const start = Number(url.searchParams.get('cursor') ?? 0);
        const end = start + pageSize;
        const next = end < items.length ? `${path || 'root'}?cursor=${end}` : null;
        return json({ username, items: items.slice(start, end), nextPagePath: next });
      }
      return json({ message: 'Not found' }, 404);
    }) as typeof fetch,
  };
  return fake;
}

/** Companion's search routes over `photos`: every photo whose name holds the query, paged. */
function search(url: URL, photos: ProviderItem[], pageSize: number, json: (v: unknown, s?: number) => Response) {
  if (url.pathname.startsWith('/search/unsplash/get/')) return json({ token: `transfer-${url.pathname.slice(21)}` });
  if (url.pathname !== '/search/unsplash/list') return json({ message: 'Not found' }, 404);
  const q = url.searchParams.get('q')?.trim() ?? '';
  if (q === '') return json({ message: 'Search query missing' }, 400);
  const found = photos.filter((p) => p.name.toLowerCase().includes(q.toLowerCase()));
  const page = Number(url.searchParams.get('cursor') ?? 1);
  const items = found.slice((page - 1) * pageSize, page * pageSize);
  const next = page * pageSize < found.length ? `cursor=${page + 1}` : null;
  return json({ searchedFor: q, username: null, items, nextPageQuery: next });
}
