import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { OnlineWatcher } from './online.ts';

describe('OnlineWatcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  test('polls every 3 s and reports each change once', () => {
    let online = true;
    const changes: boolean[] = [];
    const watcher = new OnlineWatcher({ isOnline: () => online }, (o) => changes.push(o));
    online = false;
    vi.advanceTimersByTime(2999);
    expect(changes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(changes).toEqual([false]);
    vi.advanceTimersByTime(9000);
    expect(changes).toEqual([false]);
    online = true;
    vi.advanceTimersByTime(3000);
    expect(changes).toEqual([false, true]);
    watcher.stop();
    online = false;
    vi.advanceTimersByTime(30_000);
    expect(changes).toEqual([false, true]);
  });

  test('online/offline events are seen at once', () => {
    let online = true;
    const target = new EventTarget();
    const changes: boolean[] = [];
    const watcher = new OnlineWatcher({ isOnline: () => online, target }, (o) => changes.push(o));
    online = false;
    target.dispatchEvent(new Event('offline'));
    expect(changes).toEqual([false]);
    expect(watcher.online).toBe(false);
    online = true;
    target.dispatchEvent(new Event('online'));
    expect(changes).toEqual([false, true]);
    watcher.stop();
  });
});
