import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { DEFAULT_STALL_TIMEOUT, StallTimer } from './stall.ts';

describe('StallTimer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  test('fires once after 30 s without progress (the spec default)', () => {
    expect(DEFAULT_STALL_TIMEOUT).toBe(30_000);
    const onStall = vi.fn();
    new StallTimer(DEFAULT_STALL_TIMEOUT, onStall);
    vi.advanceTimersByTime(29_999);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onStall).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(120_000);
    expect(onStall).toHaveBeenCalledTimes(1);
  });

  test('progress restarts the countdown; stop cancels it', () => {
    const onStall = vi.fn();
    const timer = new StallTimer(30_000, onStall);
    vi.advanceTimersByTime(20_000);
    timer.progress();
    vi.advanceTimersByTime(20_000);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(10_000);
    expect(onStall).toHaveBeenCalledTimes(1);

    const other = vi.fn();
    const stopped = new StallTimer(30_000, other);
    stopped.stop();
    stopped.progress();
    vi.advanceTimersByTime(60_000);
    expect(other).not.toHaveBeenCalled();
  });

  test('progress is cheap: a thousand reports set no timer, and the stall still comes on time', () => {
    const onStall = vi.fn();
    const timer = new StallTimer(30_000, onStall);
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    for (let i = 0; i < 1000; i += 1) timer.progress();
    expect(setTimer).not.toHaveBeenCalled();
    vi.advanceTimersByTime(29_999);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onStall).toHaveBeenCalledTimes(1);
    setTimer.mockRestore();
  });
});
