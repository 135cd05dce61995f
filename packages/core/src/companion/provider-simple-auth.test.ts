/**
 * Form sign-in (WebDAV): `ProviderClient.simpleAuth` posts Companion's `{form}` to
 * `/{p}/simple-auth` and keeps the token; a refusal carries the companion's own message (a bad
 * URL, a private address), which the browser shows in its auth view; signed in, the root lists.
 */
import { describe, expect, it } from 'vitest';
import { Ferry } from '../ferry.ts';
import { ProviderRequestError } from './http.ts';
import { ProviderClient } from './provider.ts';

interface Call {
  method: string;
  path: string;
  token: string | null;
  body: unknown;
}

/** A companion whose `/webdav/simple-auth` refuses any URL but `https://dav.example/`. */
function fakeWebdav() {
  const calls: Call[] = [];
  const fetchImpl = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const headers = (init.headers ?? {}) as Record<string, string>;
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    calls.push({ method: init.method ?? 'GET', path: url.pathname, token: headers['uppy-auth-token'] ?? null, body });
    const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status });
    if (url.pathname === '/webdav/simple-auth') {
      const form = (body as { form?: { webdavUrl?: string } }).form;
      if (form?.webdavUrl === 'https://dav.example/') return json({ uppyAuthToken: 'sealed' });
      if (form?.webdavUrl === 'http://10.0.0.5/dav/') {
        return json({ message: 'The WebDAV URL points at an address that is not allowed' }, 400);
      }
      return json({ message: 'Invalid WebDAV URL' }, 400);
    }
    if (url.pathname === '/webdav/list/' && headers['uppy-auth-token'] === 'sealed') {
      const item = { isFolder: false, id: '%2Fa.txt', name: 'a.txt', requestPath: '%2Fa.txt', size: 3 };
      return json({ username: 'alice@dav.example', items: [item], nextPagePath: null });
    }
    return json({ message: 'no' }, 404);
  }) as typeof fetch;
  return { calls, fetch: fetchImpl };
}

describe('ProviderClient.simpleAuth', () => {
  it("posts Companion's form body and keeps the token; a refusal throws the companion's message", async () => {
    const fake = fakeWebdav();
    const client = new ProviderClient({ companionUrl: 'http://c.test/', id: 'webdav', fetch: fake.fetch });
    await expect(client.simpleAuth({ webdavUrl: 'nope' })).rejects.toEqual(
      new ProviderRequestError('Invalid WebDAV URL', 400),
    );
    expect(client.token).toBeNull();
    await client.simpleAuth({ webdavUrl: 'https://dav.example/', username: 'alice', password: 'app' });
    expect(client.token).toBe('sealed');
    expect(fake.calls.at(-1)).toEqual({
      method: 'POST',
      path: '/webdav/simple-auth',
      token: null,
      body: { form: { webdavUrl: 'https://dav.example/', username: 'alice', password: 'app' } },
    });
  });
});

describe('ProviderBrowser of a form sign-in provider', () => {
  it("starts at the form, shows the companion's refusal, then lists the root once signed in", async () => {
    const fake = fakeWebdav();
    const ferry = new Ferry({
      companionUrl: 'http://c.test',
      online: { isOnline: () => true },
      providerOptions: { fetch: fake.fetch },
    });
    const browser = ferry.providers.browser('webdav');
    expect(browser.simpleAuth).toBe(true);
    browser.start();
    expect(browser.getState()).toMatchObject({ status: 'auth', error: null });
    await browser.signIn({ webdavUrl: 'http://10.0.0.5/dav/' });
    expect(browser.getState()).toMatchObject({
      status: 'auth',
      error: 'The WebDAV URL points at an address that is not allowed',
    });
    await browser.signIn({ webdavUrl: 'https://dav.example/' });
    expect(browser.getState()).toMatchObject({ status: 'ready', error: null, username: 'alice@dav.example' });
    expect(browser.getState().items.map((i) => i.name)).toEqual(['a.txt']);
    expect(fake.calls.filter((c) => c.path.startsWith('/webdav/list')).map((c) => c.token)).toEqual(['sealed']);
    ferry.destroy();
  });
});
