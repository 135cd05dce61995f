/**
 * Rate limits as a wait: `Retry-After` read as seconds or a date (else the body's `retryAfter`),
 * the countdown reported every second and the request sent again, the bound on waits, and the
 * provider browser showing the wait in its state while it lasts (fake timers: no real waiting).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ferry } from '../ferry.ts';
import { fakeCompanion, file, folder } from '../test/fake-companion.ts';
import { ProviderRateLimitError, ProviderRequestError, retryAfterOf } from './http.ts';
import type { ProviderItem } from './provider.ts';
import { retryAfterLimits, type Waiting } from './provider-wait.ts';

describe('retryAfterOf', () => {
  const now = Date.parse('2026-11-26T01:00:00Z');
  it('reads seconds, an HTTP date, the body, else the default', () => {
    expect(retryAfterOf('12', null, now)).toBe(12);
    expect(retryAfterOf('Thu, 26 Nov 2026 01:00:30 GMT', null, now)).toBe(30);
    expect(retryAfterOf('Thu, 26 Nov 2026 00:59:00 GMT', null, now)).toBe(0);
    expect(retryAfterOf(null, { retryAfter: 7 }, now)).toBe(7);
    expect(retryAfterOf('soon', { retryAfter: 2.5 }, now)).toBe(3);
    expect(retryAfterOf(null, { retryAfter: -1 }, now)).toBe(5);
    expect(retryAfterOf(null, null, now)).toBe(5);
  });
});

describe('retryAfterLimits', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('counts the wait down every second, then sends the request again', async () => {
    const seen: (Waiting | null)[] = [];
    const request = vi
      .fn<() => Promise<string>>()
      .mockRejectedValueOnce(new ProviderRateLimitError('Slow down', 3))
      .mockResolvedValueOnce('page');
    const done = retryAfterLimits(request, { onWait: (w) => seen.push(w) });
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.map((w) => w?.seconds)).toEqual([3]);
    expect(request).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(seen.map((w) => w?.seconds)).toEqual([3, 2, 1]);
    expect(request).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await done).toBe('page');
    expect(request).toHaveBeenCalledTimes(2);
    expect(seen.at(-1)).toBeNull();
    expect(seen[0]).toEqual({ seconds: 3, retryAfter: 3, message: 'Slow down', attempt: 1 });
  });

  it('gives up after the last wait with the companion message, and at once for a wait too long or another error', async () => {
    const limited = vi.fn(async () => {
      throw new ProviderRateLimitError('Dropbox is rate limiting requests', 1);
    });
    const outcome = retryAfterLimits(limited, { maxWaits: 2 }).catch((e: Error) => e);
    await vi.advanceTimersByTimeAsync(5000);
    expect(await outcome).toMatchObject({ message: 'Dropbox is rate limiting requests', status: 429 });
    expect(limited).toHaveBeenCalledTimes(3);

    const long = vi.fn(async () => {
      throw new ProviderRateLimitError('Come back tomorrow', 86_400);
    });
    await expect(retryAfterLimits(long)).rejects.toThrow('Come back tomorrow');
    expect(long).toHaveBeenCalledTimes(1);

    const broken = vi.fn(async () => {
      throw new ProviderRequestError('Bad gateway', 502);
    });
    await expect(retryAfterLimits(broken)).rejects.toThrow('Bad gateway');
    expect(broken).toHaveBeenCalledTimes(1);
  });

  it('ends the wait when aborted, without sending again', async () => {
    const seen: (Waiting | null)[] = [];
    const request = vi.fn(async () => {
      throw new ProviderRateLimitError('Slow down', 10);
    });
    const controller = new AbortController();
    const outcome = retryAfterLimits(request, { signal: controller.signal, onWait: (w) => seen.push(w) }).catch(
      (e: Error) => e,
    );
    await vi.advanceTimersByTimeAsync(2000);
    controller.abort();
    expect(await outcome).toMatchObject({ name: 'AbortError' });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(request).toHaveBeenCalledTimes(1);
    expect(seen.at(-1)).toBeNull();
  });
});

describe('ProviderBrowser under a rate limit', () => {
  let ferry: Ferry;
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    ferry?.destroy();
    vi.useRealTimers();
  });

  function setup() {
    const tree = { root: [file('a.txt'), file('b.txt'), folder('Trips')], 'dir-Trips': [file('c.txt'), file('d.txt')] };
    const fake = fakeCompanion(tree, 1000);
    ferry = new Ferry({
      companionUrl: 'http://c.test',
      online: { isOnline: () => true },
      providerOptions: { fetch: fake.fetch },
    });
    ferry.providers.client('drive').setToken('good');
    return { fake, browser: ferry.providers.browser('drive') };
  }

  it('waits with a countdown in its state, then lists by itself', async () => {
    const { fake, browser } = setup();
    fake.rateLimited = 1;
    browser.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(browser.getState()).toMatchObject({
      status: 'loading',
      error: null,
      waiting: { seconds: 12, retryAfter: 12, message: 'The provider is rate limiting requests', attempt: 1 },
    });
    await vi.advanceTimersByTimeAsync(5000);
    expect(browser.getState().waiting?.seconds).toBe(7);
    expect(fake.calls.map((c) => c.path)).toEqual(['/drive/list/root']);
    await vi.advanceTimersByTimeAsync(7000);
    expect(browser.getState()).toMatchObject({ status: 'ready', waiting: null, error: null });
    expect(browser.getState().items.map((i) => i.name)).toEqual(['a.txt', 'b.txt', 'Trips']);
    expect(fake.calls.map((c) => c.path)).toEqual(['/drive/list/root', '/drive/list/root']);
  });

  it('shows a final message as the error once the waits are used up, not the retrying one', async () => {
    const { fake, browser } = setup();
    fake.rateLimited = 10;
    fake.retryAfter = 1;
    browser.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(browser.getState()).toMatchObject({
      status: 'error',
      error: 'Google Drive is still limiting requests. Please try again in a few minutes.',
      waiting: null,
    });
    // The first request and one per wait.
    expect(fake.calls).toHaveLength(4);
  });

  it('drops the wait when the person leaves: logging out sends nothing more', async () => {
    const { fake, browser } = setup();
    fake.rateLimited = 1;
    browser.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(browser.getState().waiting?.seconds).toBe(11);
    await browser.logout();
    expect(browser.getState()).toMatchObject({ status: 'auth', waiting: null });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(fake.calls.filter((c) => c.path.includes('/list/'))).toHaveLength(1);
  });

  it('a selected folder whose listing is rate limited is counted once the wait is over', async () => {
    const { fake, browser } = setup();
    browser.start();
    await vi.advanceTimersByTimeAsync(0);
    fake.rateLimited = 1;
    browser.toggle(browser.getState().items[2] as ProviderItem);
    await vi.advanceTimersByTimeAsync(5000);
    expect(browser.summary()).toMatchObject({ total: 0, counting: true });
    await vi.advanceTimersByTimeAsync(7000);
    expect(browser.summary()).toMatchObject({ total: 2, counting: false });
    expect(fake.calls.map((c) => c.path)).toEqual([
      '/drive/list/root',
      '/drive/list/dir-Trips',
      '/drive/list/dir-Trips',
    ]);
  });
});
