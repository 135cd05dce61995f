/**
 * The time-sliced queue (`slicer.ts`): how long a slice runs, and that the page's own work (its
 * timers, its rendering) gets the turns between slices.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { defaultYield, SlicedQueue } from './slicer.ts';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('the main thread between slices', () => {
  test('a turn is a task, never a scheduler.yield() continuation (those run ahead of the page)', async () => {
    const yielded = vi.fn(() => Promise.resolve());
    vi.stubGlobal('scheduler', { yield: yielded });
    await defaultYield();
    expect(yielded).not.toHaveBeenCalled();
  });

  test('every turn goes through one channel, answered in order', async () => {
    const Real = MessageChannel;
    let made = 0;
    vi.stubGlobal(
      'MessageChannel',
      class extends Real {
        constructor() {
          super();
          made += 1;
        }
      },
    );
    const order: number[] = [];
    await Promise.all([0, 1, 2].map((n) => defaultYield().then(() => order.push(n))));
    for (let n = 3; n < 6; n += 1) await defaultYield().then(() => order.push(n));
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(made).toBe(1);
  });

  test("an application's setTimeout(0) set during a slice runs before the next slice", async () => {
    // Without MessageChannel the turn is a timeout: fake timers run them in the order set.
    vi.stubGlobal('MessageChannel', undefined);
    vi.useFakeTimers();
    const log: string[] = [];
    const clock = { now: 0 };
    const queue = new SlicedQueue<number, number>(
      {
        // Each item costs 1 ms; the third of each slice is where the application sets a timer.
        read: (n) => {
          clock.now += 1;
          log.push(`read ${n}`);
          if (n === 2) setTimeout(() => log.push('application timer'), 0);
          return n;
        },
        commit: (results) => log.push(`commit ${results.length}`),
      },
      { sliceMs: 8, now: () => clock.now },
    );
    queue.push(Array.from({ length: 20 }, (_, i) => i));
    // Nothing runs inside push: the first slice waits for a turn.
    expect(log).toEqual([]);
    await vi.runAllTimersAsync();
    const reads = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `read ${from + i}`);
    expect(log).toEqual([
      ...reads(0, 8),
      'commit 8',
      'application timer',
      ...reads(8, 16),
      'commit 8',
      ...reads(16, 20),
      'commit 4',
    ]);
    await expect(queue.drained()).resolves.toBeUndefined();
  });

  test('results are committed at most once a commitMs window, and always at the end', async () => {
    vi.stubGlobal('MessageChannel', undefined);
    vi.useFakeTimers();
    const clock = { now: 0 };
    const commits: number[] = [];
    const queue = new SlicedQueue<number, number>(
      {
        read: (n) => {
          clock.now += 1;
          return n;
        },
        commit: (results) => commits.push(results.length),
      },
      { sliceMs: 8, commitMs: 20, now: () => clock.now },
    );
    queue.push(Array.from({ length: 50 }, (_, i) => i));
    await vi.runAllTimersAsync();
    // Slices of 8: the first commits, the next two wait for the 20 ms window, ...
    expect(commits).toEqual([8, 24, 18]);
    expect(commits.reduce((a, b) => a + b)).toBe(50);
  });

  test('a slice that ends in a costly commit reads for less, so reads and commit stay within the slice', async () => {
    vi.stubGlobal('MessageChannel', undefined);
    vi.useFakeTimers();
    const clock = { now: 0 };
    // Each read costs 1 ms and each commit 5 ms (a state change copying everything there).
    const turns: { reads: number; ms: number }[] = [];
    let reads = 0;
    let turnStart = 0;
    const queue = new SlicedQueue<number, number>(
      {
        read: (n) => {
          if (reads === 0) turnStart = clock.now;
          clock.now += 1;
          reads += 1;
          return n;
        },
        commit: () => {
          clock.now += 5;
          turns.push({ reads, ms: clock.now - turnStart });
          reads = 0;
        },
      },
      { sliceMs: 8, now: () => clock.now },
    );
    queue.push(Array.from({ length: 30 }, (_, i) => i));
    await vi.runAllTimersAsync();
    expect(turns.reduce((a, t) => a + t.reads, 0)).toBe(30);
    // The first slice cannot know what its commit costs; every later one leaves it room.
    expect(turns[0]).toEqual({ reads: 8, ms: 13 });
    expect(turns.slice(1, -1).every((t) => t.reads === 3 && t.ms === 8)).toBe(true);
    expect(Math.max(...turns.slice(1).map((t) => t.ms))).toBeLessThanOrEqual(8);
  });
});
