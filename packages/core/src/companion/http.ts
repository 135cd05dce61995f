/**
 * What every companion client shares, below them all: the `fetch` and WebSocket seams, joining
 * the companion URL, the bearer token as a URL parameter, and the errors of provider requests.
 * It imports nothing, so `uploader.ts`, `remote.ts`, `provider.ts` and `provider-login.ts` can
 * all use it without importing one another.
 */

export type FetchLike = typeof fetch;

/** The minimal WebSocket surface used (injectable for tests). */
export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  readonly readyState: number;
  send(data: string): void;
  close(): void;
}

export type SocketFactory = (url: string) => SocketLike;

/** The companion URL without trailing slashes, for joining paths. */
export function base(companionUrl: string): string {
  return companionUrl.replace(/\/+$/, '');
}

/**
 * `url` with the bearer token of `headers` as its `access_token` parameter (RFC 6750), for what a
 * browser cannot add headers to: a websocket, an image.
 */
export function withAccessToken(url: string, headers: Record<string, string>): string {
  const auth = Object.entries(headers).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
  const token = auth?.match(/^bearer\s+(.+)$/i)?.[1]?.trim();
  if (!token) return url;
  return `${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`;
}

/** The companion refused the token and none could be had: the person must connect again. */
export class ProviderAuthError extends Error {
  readonly status = 401;
  constructor(message = 'Authorization required') {
    super(message);
    this.name = 'ProviderAuthError';
  }
}

/** A provider request the companion answered with an error (its `message` when it sent one). */
export class ProviderRequestError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = 'ProviderRequestError';
    this.status = status;
  }
}

/**
 * The companion is rate limited by the provider (429 with `Retry-After`): not a failure but a
 * wait of `retryAfter` seconds, after which the same request may be sent again.
 */
export class ProviderRateLimitError extends ProviderRequestError {
  readonly retryAfter: number;
  constructor(message: string, retryAfter: number) {
    super(message, 429);
    this.name = 'ProviderRateLimitError';
    this.retryAfter = retryAfter;
  }
}

/** Seconds to wait when a 429 says nothing usable. */
export const DEFAULT_RETRY_AFTER = 5;

/**
 * Seconds to wait from a 429: the `Retry-After` header (seconds or an HTTP date, RFC 9110
 * §10.2.3), else the body's `retryAfter`, else {@link DEFAULT_RETRY_AFTER}; never negative.
 */
export function retryAfterOf(header: string | null, body: unknown, now = Date.now()): number {
  const fromHeader = header === null ? Number.NaN : secondsOf(header.trim(), now);
  if (Number.isFinite(fromHeader)) return fromHeader;
  const fromBody = (body as { retryAfter?: unknown } | null)?.retryAfter;
  if (typeof fromBody === 'number' && Number.isFinite(fromBody) && fromBody >= 0) return Math.ceil(fromBody);
  return DEFAULT_RETRY_AFTER;
}

function secondsOf(value: string, now: number): number {
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? Number.NaN : Math.max(0, Math.ceil((at - now) / 1000));
}
