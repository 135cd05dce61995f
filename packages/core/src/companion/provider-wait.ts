/**
 * Rate limits as a wait, not a failure: a provider request the companion answers 429 (a
 * {@link ProviderRateLimitError}) is sent again after its `Retry-After`, with a countdown reported
 * every second so the person sees "Waiting for Dropbox… retrying in 12 s". The waits are bounded
 * (a few of them, none longer than a few minutes); past that the request fails with
 * {@link stillLimitedMessage}, not the 429's own words (which say it is retrying).
 */
import type { Waiting } from '../types.ts';
import { ProviderRateLimitError } from './http.ts';

export type { Waiting } from '../types.ts';

export interface WaitOptions {
  /** Aborting ends the wait (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Called when a wait starts, every second of it, and with null when the request goes again. */
  onWait?(waiting: Waiting | null): void;
  /** Waits before giving up (default {@link MAX_WAITS}). */
  maxWaits?: number;
  /** A longer `Retry-After` fails at once (default {@link MAX_WAIT_SECONDS}). */
  maxSeconds?: number;
}

/** How many rate-limit waits one request sits through before its 429 is an error. */
export const MAX_WAITS = 3;

/** The longest `Retry-After` waited for (seconds); a provider asking more is reported at once. */
export const MAX_WAIT_SECONDS = 300;

/**
 * The person's words for a rate limit the waits did not outlast: the 429 itself says "retrying in
 * N s" (true while waiting), so once nothing will retry it must not be shown as is.
 */
export function stillLimitedMessage(provider: string, i18n: (key: string, vars?: Record<string, string>) => string) {
  return i18n('stillRateLimited', { provider });
}

/** Runs `request`, waiting out rate limits as told and trying again, within the bounds. */
export async function retryAfterLimits<T>(request: () => Promise<T>, options: WaitOptions = {}): Promise<T> {
  const { maxWaits = MAX_WAITS, maxSeconds = MAX_WAIT_SECONDS } = options;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof ProviderRateLimitError) || attempt > maxWaits || error.retryAfter > maxSeconds) {
        throw error;
      }
      const wait = { seconds: error.retryAfter, retryAfter: error.retryAfter, message: error.message, attempt };
      await countdown(wait, options);
    }
  }
}

/** Reports `waiting` once a second down to zero, then null; rejects when `signal` aborts. */
export function countdown(waiting: Waiting, options: Pick<WaitOptions, 'signal' | 'onWait'> = {}): Promise<void> {
  const { signal, onWait } = options;
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let left = waiting.seconds;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      onWait?.(null);
      reject(signal?.reason);
    };
    const tick = () => {
      if (left <= 0) {
        signal?.removeEventListener('abort', onAbort);
        onWait?.(null);
        resolve();
        return;
      }
      onWait?.({ ...waiting, seconds: left });
      left -= 1;
      timer = setTimeout(tick, 1000);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    tick();
  });
}
