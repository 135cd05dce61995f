import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { FRAME_MS, framed } from './changes.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A store's subscribe that the test drives by hand. */
function source() {
  const listeners = new Set<() => void>();
  return {
    subscribe: (listener: () => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    change: () => {
      for (const l of listeners) l();
    },
    get size() {
      return listeners.size;
    },
  };
}

test('a change after a quiet frame is told at once', () => {
  const store = source();
  const told = vi.fn();
  framed(store.subscribe)(told);
  store.change();
  expect(told).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(FRAME_MS * 2);
  store.change();
  expect(told).toHaveBeenCalledTimes(2);
});

test('a burst of changes within a frame is told once more, at the frame end', () => {
  const store = source();
  const told = vi.fn();
  framed(store.subscribe)(told);
  store.change();
  for (let i = 0; i < 500; i += 1) store.change();
  expect(told).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(FRAME_MS - 1);
  expect(told).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(1);
  expect(told).toHaveBeenCalledTimes(2);
  vi.advanceTimersByTime(FRAME_MS * 5);
  expect(told).toHaveBeenCalledTimes(2);
});

test('listeners share one subscription, dropped with the last listener along with a pending tell', () => {
  const store = source();
  const subscribe = framed(store.subscribe);
  const a = vi.fn();
  const b = vi.fn();
  const offA = subscribe(a);
  const offB = subscribe(b);
  expect(store.size).toBe(1);
  store.change();
  store.change();
  offA();
  expect(store.size).toBe(1);
  offB();
  expect(store.size).toBe(0);
  vi.advanceTimersByTime(FRAME_MS * 2);
  expect(a).toHaveBeenCalledTimes(1);
  expect(b).toHaveBeenCalledTimes(1);
});
