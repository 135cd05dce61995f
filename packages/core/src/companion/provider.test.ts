import { describe, expect, it } from 'vitest';
import { fakeCompanion, file } from '../test/fake-companion.ts';
import { ProviderAuthError, ProviderRequestError } from './http.ts';
import { ProviderClient, type TokenStorage, tokenKey } from './provider.ts';

function memoryStorage(): TokenStorage & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
  };
}

const many = Array.from({ length: 25 }, (_, i) => file(`f${String(i).padStart(2, '0')}.txt`));

function client(fake: ReturnType<typeof fakeCompanion>, storage?: TokenStorage) {
  return new ProviderClient({ companionUrl: 'http://c.test/base/', id: 'drive', fetch: fake.fetch, storage });
}

describe('ProviderClient', () => {
  it('lists with the token header and pages to the end through nextPagePath, verbatim', async () => {
    const fake = fakeCompanion({ root: many }, 10);
    const c = client(fake);
    c.setToken('good');
    const pages = [];
    for await (const page of c.pages('root')) pages.push(page);
    expect(pages.map((p) => p.items.length)).toEqual([10, 10, 5]);
    expect(pages.flatMap((p) => p.items.map((i) => i.name))).toEqual(many.map((i) => i.name));
    expect(pages.map((p) => p.username)).toEqual(['ada@example.com', 'ada@example.com', 'ada@example.com']);
    expect(pages.at(-1)?.nextPagePath).toBeNull();
    expect(fake.calls.map((call) => [call.method, call.path, call.token])).toEqual([
      ['GET', '/base/drive/list/root', 'good'],
      ['GET', '/base/drive/list/root?cursor=10', 'good'],
      ['GET', '/base/drive/list/root?cursor=20', 'good'],
    ]);
  });

  it('answers concurrent 401s with ONE shared refresh, then retries each request with the new token', async () => {
    const fake = fakeCompanion({ root: many }, 100);
    fake.refreshable.add('expired');
    fake.holdRefresh = true;
    const storage = memoryStorage();
    const c = client(fake, storage);
    c.setToken('expired');
    const lists = [c.list('root'), c.list('root'), c.list('root')];
    // All three were refused; the refresh is held until all of them wait on it.
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    fake.releaseRefresh();
    const pages = await Promise.all(lists);
    expect(pages.map((p) => p.items.length)).toEqual([25, 25, 25]);
    const refreshes = fake.calls.filter((call) => call.path === '/base/drive/refresh-token');
    expect(refreshes).toEqual([{ method: 'POST', path: '/base/drive/refresh-token', token: 'expired' }]);
    const lists401 = fake.calls.filter((call) => call.path.endsWith('/list/root'));
    expect(lists401.map((call) => call.token).sort()).toEqual([
      'expired',
      'expired',
      'expired',
      'refreshed-1',
      'refreshed-1',
      'refreshed-1',
    ]);
    expect(c.token).toBe('refreshed-1');
    expect(storage.map.get(tokenKey('http://c.test/base', 'drive'))).toBe('refreshed-1');
  });

  it('a request refused after another already refreshed uses the newer token, without a second refresh', async () => {
    const fake = fakeCompanion({ root: many });
    fake.refreshable.add('expired');
    const c = client(fake);
    c.setToken('expired');
    await c.list('root');
    fake.valid.delete('refreshed-1');
    fake.refreshable.add('refreshed-1');
    await c.list('root');
    expect(fake.calls.filter((call) => call.path.endsWith('refresh-token')).map((call) => call.token)).toEqual([
      'expired',
      'refreshed-1',
    ]);
    expect(c.token).toBe('refreshed-2');
  });

  it('a refused refresh drops the token (memory and storage) and throws ProviderAuthError to every waiter', async () => {
    const fake = fakeCompanion({ root: many });
    const storage = memoryStorage();
    storage.setItem(tokenKey('http://c.test/base/', 'drive'), 'revoked');
    const c = client(fake, storage);
    expect(c.token).toBe('revoked');
    const results = await Promise.allSettled([c.list('root'), c.list('root')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ProviderAuthError);
    expect(fake.calls.filter((call) => call.path.endsWith('refresh-token'))).toHaveLength(1);
    expect(c.token).toBeNull();
    expect(storage.map.size).toBe(0);
  });

  it('without refresh support a 401 drops the token at once', async () => {
    const fake = fakeCompanion({ root: many });
    fake.refreshable.add('expired');
    const c = new ProviderClient({
      companionUrl: 'http://c.test',
      id: 'drive',
      fetch: fake.fetch,
      supportsRefreshToken: false,
    });
    c.setToken('expired');
    await expect(c.list('root')).rejects.toBeInstanceOf(ProviderAuthError);
    expect(fake.calls.map((call) => call.path)).toEqual(['/drive/list/root']);
    expect(c.token).toBeNull();
  });

  it('other failures carry the companion message and status', async () => {
    const fake = fakeCompanion({});
    const c = client(fake);
    c.setToken('good');
    const error = await c.list('missing').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderRequestError);
    expect(error).toMatchObject({ status: 404, message: 'No such folder' });
    expect(c.token).toBe('good');
  });

  it('logout revokes with the token and forgets it, even when the companion fails', async () => {
    const fake = fakeCompanion({});
    const storage = memoryStorage();
    const c = client(fake, storage);
    const changes: (string | null)[] = [];
    c.onTokenChange(() => changes.push(c.token));
    c.setToken('good');
    await expect(c.logout()).resolves.toEqual({ ok: true, revoked: true });
    expect(fake.calls).toEqual([{ method: 'GET', path: '/base/drive/logout', token: 'good' }]);
    expect(c.token).toBeNull();
    expect(storage.map.size).toBe(0);
    expect(changes).toEqual(['good', null]);

    const failing = new ProviderClient({
      companionUrl: 'http://c.test',
      id: 'drive',
      fetch: (async () => new Response('{"message":"down"}', { status: 502 })) as typeof fetch,
    });
    failing.setToken('good');
    await expect(failing.logout()).rejects.toMatchObject({ status: 502, message: 'down' });
    expect(failing.token).toBeNull();
  });
});
