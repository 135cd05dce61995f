import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { DEFAULT_RETRY_DELAYS, isRetryableStatus, shouldRetry, withRetries } from './retryer.ts';

describe('retry policy', () => {
  test('retries non-4xx, 409 and 423; never other 4xx; never offline', () => {
    for (const s of [undefined, 0, 500, 502, 503, 409, 423, 302]) expect(isRetryableStatus(s)).toBe(true);
    for (const s of [400, 401, 403, 404, 410, 413, 460, 499]) expect(isRetryableStatus(s)).toBe(false);
    expect(shouldRetry(500, false)).toBe(false);
    expect(shouldRetry(423, true)).toBe(true);
  });

  test('the spec delays', () => {
    expect(DEFAULT_RETRY_DELAYS).toEqual([0, 1000, 3000, 5000]);
  });
});

describe('withRetries', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const failing = (status: number) => Object.assign(new Error(`status ${status}`), { status });

  test('waits each delay in turn, then gives up with the last error', async () => {
    const times: number[] = [];
    const attempt = vi.fn(async () => {
      times.push(Date.now());
      throw failing(503);
    });
    const start = Date.now();
    const done = withRetries(attempt, {
      delays: DEFAULT_RETRY_DELAYS,
      signal: new AbortController().signal,
      isOnline: () => true,
    }).catch((e: Error) => e);
    await vi.runAllTimersAsync();
    expect(((await done) as Error).message).toBe('status 503');
    expect(times.map((t) => t - start)).toEqual([0, 0, 1000, 4000, 9000]);
  });

  test('a 4xx is not retried; 423 is; success stops', async () => {
    const four = vi.fn(async () => {
      throw failing(404);
    });
    await expect(
      withRetries(four, { delays: [0, 0], signal: new AbortController().signal, isOnline: () => true }),
    ).rejects.toThrow('status 404');
    expect(four).toHaveBeenCalledTimes(1);

    let n = 0;
    const locked = vi.fn(async () => {
      n += 1;
      if (n < 3) throw failing(423);
      return 'ok';
    });
    const result = withRetries(locked, {
      delays: [10, 10, 10],
      signal: new AbortController().signal,
      isOnline: () => true,
    });
    await vi.runAllTimersAsync();
    expect(await result).toBe('ok');
    expect(locked).toHaveBeenCalledTimes(3);
  });

  test('no retry while offline, and abort stops the wait', async () => {
    const offline = vi.fn(async () => {
      throw failing(500);
    });
    await expect(
      withRetries(offline, { delays: [0], signal: new AbortController().signal, isOnline: () => false }),
    ).rejects.toThrow('status 500');
    expect(offline).toHaveBeenCalledTimes(1);

    const controller = new AbortController();
    const slow = vi.fn(async () => {
      throw failing(500);
    });
    const done = withRetries(slow, { delays: [60_000], signal: controller.signal, isOnline: () => true }).catch(
      (e: Error) => e.message,
    );
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(await done).toBe('status 500');
    expect(slow).toHaveBeenCalledTimes(1);
  });
});
