import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeSocket } from '../test/fake-socket.ts';
import { type AuthMessage, type LoginEnv, LoginError, popupLogin } from './provider-login.ts';

class FakePopup {
  closed = false;
  constructor(readonly url: string) {}
  close() {
    this.closed = true;
  }
}

function fakes(options: { blocked?: boolean } = {}) {
  const popups: FakePopup[] = [];
  const sockets: FakeSocket[] = [];
  const listeners = new Set<(event: AuthMessage) => void>();
  const env: Partial<LoginEnv> = {
    open: (url) => {
      if (options.blocked) return null;
      const popup = new FakePopup(url);
      popups.push(popup);
      return popup;
    },
    listen: (handler) => {
      listeners.add(handler);
      return () => listeners.delete(handler);
    },
    socket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    origin: 'http://app.test',
    uuid: () => '0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
  };
  const post = (event: AuthMessage) => {
    for (const l of [...listeners]) l(event);
  };
  return { env, popups, sockets, listeners, post };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('popupLogin', () => {
  it('opens /connect with state = base64 {origin} and a fresh authCallbackToken, and takes the token from the auth socket', async () => {
    const f = fakes();
    const login = popupLogin('http://companion.test/c/', 'drive', f.env);
    const [popup] = f.popups;
    const url = new URL(popup?.url ?? '');
    expect(`${url.origin}${url.pathname}`).toBe('http://companion.test/c/drive/connect');
    expect(JSON.parse(atob(url.searchParams.get('state') ?? ''))).toEqual({ origin: 'http://app.test' });
    expect(url.searchParams.get('authCallbackToken')).toBe('0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d');
    expect(url.searchParams.get('uppyVersions')).toBe('');
    expect(f.sockets[0]?.url).toBe(
      'ws://companion.test/c/api2/auth-callback/token/0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
    );
    f.sockets[0]?.onmessage?.({ data: JSON.stringify({ token: 'sealed-1' }) });
    await expect(login).resolves.toBe('sealed-1');
    expect(popup?.closed).toBe(true);
    expect(f.sockets[0]?.closed).toBe(true);
    expect(f.listeners.size).toBe(0);
  });

  it('takes the token from a postMessage of the popup at the companion origin, ignoring other origins and windows', async () => {
    const f = fakes();
    const login = popupLogin('https://companion.test', 'drive', f.env);
    const popup = f.popups[0];
    let settled = false;
    void login.then(() => {
      settled = true;
    });
    f.post({ origin: 'https://evil.test', data: { token: 'stolen' }, source: popup });
    f.post({ origin: 'https://companion.test', data: { token: 'framed' }, source: {} });
    f.post({ origin: 'https://companion.test', data: 'not json', source: popup });
    await Promise.resolve();
    expect(settled).toBe(false);
    f.post({ origin: 'https://companion.test', data: JSON.stringify({ token: 'sealed-2' }), source: popup });
    await expect(login).resolves.toBe('sealed-2');
    expect(f.sockets[0]?.url).toBe(
      'wss://companion.test/api2/auth-callback/token/0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d',
    );
    expect(f.sockets[0]?.closed).toBe(true);
  });

  it('without a socket it sends no authCallbackToken and relies on postMessage', async () => {
    const f = fakes();
    const login = popupLogin('http://companion.test', 'instagram', { ...f.env, socket: null });
    expect(new URL(f.popups[0]?.url ?? '').searchParams.has('authCallbackToken')).toBe(false);
    expect(f.sockets).toHaveLength(0);
    f.post({ origin: 'http://companion.test', data: { token: 'sealed-3' }, source: f.popups[0] });
    await expect(login).resolves.toBe('sealed-3');
  });

  it('an {error} hand-off rejects', async () => {
    const f = fakes();
    const login = popupLogin('http://companion.test', 'drive', f.env);
    f.sockets[0]?.onmessage?.({ data: '{"error":true}' });
    await expect(login).rejects.toMatchObject({ code: 'failed', message: 'Authentication failed' });
  });

  it('a popup closed without a token rejects after the grace period; a blocked popup rejects at once', async () => {
    const f = fakes();
    const login = popupLogin('http://companion.test', 'drive', f.env);
    const outcome = login.catch((e: unknown) => e);
    (f.popups[0] as FakePopup).closed = true;
    await vi.advanceTimersByTimeAsync(500);
    let done = false;
    void outcome.then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(500);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(600);
    const error = await outcome;
    expect(error).toBeInstanceOf(LoginError);
    expect(error).toMatchObject({ code: 'closed', message: 'Auth window was closed by the user' });
    expect(f.sockets[0]?.closed).toBe(true);

    const blocked = fakes({ blocked: true });
    await expect(popupLogin('http://companion.test', 'drive', blocked.env)).rejects.toMatchObject({
      code: 'popup-blocked',
    });
    expect(blocked.sockets).toHaveLength(0);
  });

  it('a token arriving on the socket just after the popup closed itself still counts', async () => {
    const f = fakes();
    const login = popupLogin('http://companion.test', 'drive', f.env);
    (f.popups[0] as FakePopup).closed = true;
    await vi.advanceTimersByTimeAsync(700);
    f.sockets[0]?.onmessage?.({ data: '{"token":"late"}' });
    await expect(login).resolves.toBe('late');
  });
});
