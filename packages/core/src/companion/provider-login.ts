/**
 * The OAuth popup of a provider login, with both of Companion's token hand-offs
 * (`shared/reference/providers.md` §1.7): the page opens `/{p}/connect` in a popup
 * (synchronously, so popup blockers let it through) with `state` = base64 JSON `{origin}` and a
 * fresh `authCallbackToken`, then takes the token from whichever arrives first:
 *
 * - the auth socket `/api2/auth-callback/token/{authCallbackToken}` (current Companion, `ferry`),
 *   which also works when the popup lost its opener (COOP, in-app browsers);
 * - a `postMessage` from the popup (released Companion), accepted only from the companion's
 *   origin and, when the browser says, from the popup itself.
 *
 * Closing the popup without a token rejects (after a short grace, since the socket message can
 * trail the popup closing itself).
 */
import { base, type SocketLike } from './http.ts';

/** The popup as far as the login needs it. */
export interface AuthWindow {
  readonly closed: boolean;
  close(): void;
}

/** A `message` event as far as the login needs it. */
export interface AuthMessage {
  origin: string;
  data: unknown;
  source?: unknown;
}

/** The browser plumbing of a login; every piece can be replaced (tests, other environments). */
export interface LoginEnv {
  /** Opens the popup; null when it was blocked. */
  open(url: string): AuthWindow | null;
  /** Listens to `message` events of the page; returns the unsubscribe. */
  listen(handler: (event: AuthMessage) => void): () => void;
  /** Opens the auth socket; omit (null) to rely on `postMessage` only. */
  socket: ((url: string) => SocketLike) | null;
  /** The page's origin, declared in `state`. */
  origin: string;
  uuid(): string;
  /** How often the popup is checked for being closed (ms, default 500). */
  pollInterval: number;
  /** How long a closed popup's token may still arrive (ms, default 1000). */
  closeGrace: number;
}

/** The browser's plumbing for what `o` does not replace (read lazily: tests have no `window`). */
function withDefaults(o: Partial<LoginEnv>): LoginEnv {
  return {
    open: o.open ?? ((url) => window.open(url, '_blank')),
    listen:
      o.listen ??
      ((handler) => {
        const listener = (event: MessageEvent) => handler(event);
        window.addEventListener('message', listener);
        return () => window.removeEventListener('message', listener);
      }),
    socket: o.socket === undefined ? (url) => new WebSocket(url) as unknown as SocketLike : o.socket,
    origin: o.origin ?? location.origin,
    uuid: o.uuid ?? (() => crypto.randomUUID()),
    pollInterval: o.pollInterval ?? 500,
    closeGrace: o.closeGrace ?? 1000,
  };
}

/** Why a login did not give a token. */
export class LoginError extends Error {
  readonly code: 'popup-blocked' | 'closed' | 'failed';
  constructor(code: LoginError['code'], message: string) {
    super(message);
    this.name = 'LoginError';
    this.code = code;
  }
}

/** The `/connect` URL: `state` declares the page origin, `authCallbackToken` names the socket. */
export function connectUrl(companionUrl: string, provider: string, origin: string, callback: string | null): string {
  const state = btoa(JSON.stringify({ origin }));
  const query = new URLSearchParams({ uppyVersions: '', state });
  if (callback !== null) query.set('authCallbackToken', callback);
  return `${base(companionUrl)}/${provider}/connect?${query}`;
}

/** Reads `{token}` or `{error}` from a hand-off message (an object, or JSON text). */
function handoff(data: unknown): { token: string } | { error: true } | null {
  let value = data;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { token?: unknown; error?: unknown };
  if (typeof v.token === 'string' && v.token) return { token: v.token };
  if (v.error) return { error: true };
  return null;
}

/** Logs in to `provider` through the companion's popup; resolves with the sealed token. */
export function popupLogin(companionUrl: string, provider: string, overrides: Partial<LoginEnv> = {}): Promise<string> {
  const env = withDefaults(overrides);
  const callback = env.socket ? env.uuid() : null;
  const popup = env.open(connectUrl(companionUrl, provider, env.origin, callback));
  if (!popup) return Promise.reject(new LoginError('popup-blocked', 'The login window was blocked'));
  const companionOrigin = new URL(base(companionUrl)).origin;

  return new Promise<string>((resolve, reject) => {
    let settled = false;
    let socket: SocketLike | null = null;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: { token: string } | { error: true } | LoginError) => {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(grace);
      unlisten();
      if (socket) {
        socket.onclose = null;
        socket.onerror = null;
        socket.close();
      }
      if (!popup.closed) popup.close();
      if (outcome instanceof LoginError) reject(outcome);
      else if ('token' in outcome) resolve(outcome.token);
      else reject(new LoginError('failed', 'Authentication failed'));
    };
    const unlisten = env.listen((event) => {
      if (event.origin !== companionOrigin) return;
      if (event.source !== undefined && event.source !== null && event.source !== popup) return;
      const message = handoff(event.data);
      if (message) finish(message);
    });
    if (env.socket && callback !== null) {
      const url = `${base(companionUrl).replace(/^http/, 'ws')}/api2/auth-callback/token/${callback}`;
      socket = env.socket(url);
      socket.onmessage = (event) => {
        const message = handoff(event.data);
        if (message) finish(message);
      };
      // A socket that fails is not fatal: the postMessage hand-off or the closed popup decides.
      socket.onerror = null;
      socket.onclose = null;
    }
    const poll = setInterval(() => {
      if (!popup.closed || grace !== undefined) return;
      grace = setTimeout(() => finish(new LoginError('closed', 'Auth window was closed by the user')), env.closeGrace);
    }, env.pollInterval);
  });
}
