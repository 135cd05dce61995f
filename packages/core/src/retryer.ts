/**
 * The retry policy: which failures are retried automatically, and the loop that waits between
 * attempts. Automatic retries happen only for statuses other than 4xx (or 409 and 423, which
 * mean "try again later") and only while the browser is online.
 */

/** The spec's delays between automatic attempts, in ms (first retry at once). */
export const DEFAULT_RETRY_DELAYS: readonly number[] = [0, 1000, 3000, 5000];

/** Whether a failure with this HTTP status (undefined: no response at all) may be retried. */
export function isRetryableStatus(status: number | undefined): boolean {
  if (status === undefined || status === 0) return true;
  if (status === 409 || status === 423) return true;
  return status < 400 || status >= 500;
}

/** The whole policy: a retryable status and an online browser. */
export function shouldRetry(status: number | undefined, online: boolean): boolean {
  return online && isRetryableStatus(status);
}

export interface RetryOptions {
  delays: readonly number[];
  signal: AbortSignal;
  isOnline: () => boolean;
  /** Status of a failure, if it has one (read from `error.status`). */
  statusOf?: (error: unknown) => number | undefined;
  /** Called before each retry, with the attempt number (1-based) and the failure. */
  onRetry?: (attempt: number, error: unknown) => void;
}

/**
 * Runs `attempt` until it succeeds, the policy says stop, the delays run out, or `signal` aborts.
 * Rejects with the last failure.
 */
export async function withRetries<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const statusOf = options.statusOf ?? ((e: unknown) => (e as { status?: number } | null)?.status);
  for (let n = 0; ; n += 1) {
    try {
      return await attempt();
    } catch (error) {
      const delay = options.delays[n];
      if (options.signal.aborted || delay === undefined || !shouldRetry(statusOf(error), options.isOnline())) {
        throw error;
      }
      options.onRetry?.(n + 1, error);
      await wait(delay, options.signal);
      if (options.signal.aborted) throw error;
    }
  }
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
