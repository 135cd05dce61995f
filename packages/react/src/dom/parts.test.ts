import type { FileDescriptor } from '@ferry/core';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createParts, partSpacing } from './parts.ts';

const files = (...names: string[]): FileDescriptor[] => names.map((name) => ({ name }));
const names = (parts: FileDescriptor[][]) => parts.map((p) => p.map((f) => f.name));

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

test('the first files go at once, later ones at most every 100 ms, the rest on flush', () => {
  const parts: FileDescriptor[][] = [];
  const p = createParts(
    (f) => parts.push(f),
    () => Date.now(),
  );
  p.push(files('a', 'b'));
  expect(names(parts)).toEqual([['a', 'b']]);
  vi.setSystemTime(Date.now() + 40);
  p.push(files('c'));
  vi.setSystemTime(Date.now() + 40);
  p.push(files('d'));
  expect(names(parts)).toEqual([['a', 'b']]);
  vi.setSystemTime(Date.now() + 30);
  p.push(files('e'));
  expect(names(parts)).toEqual([
    ['a', 'b'],
    ['c', 'd', 'e'],
  ]);
  p.push(files('f'));
  p.flush();
  expect(names(parts)).toEqual([['a', 'b'], ['c', 'd', 'e'], ['f']]);
  p.flush();
  expect(parts).toHaveLength(3);
});

test('files that wait are handed over on time when reading stalls', () => {
  const parts: FileDescriptor[][] = [];
  const p = createParts(
    (f) => parts.push(f),
    () => Date.now(),
  );
  p.push(files('a'));
  vi.advanceTimersByTime(10);
  p.push(files('b'));
  vi.advanceTimersByTime(89);
  expect(names(parts)).toEqual([['a']]);
  vi.advanceTimersByTime(1);
  expect(names(parts)).toEqual([['a'], ['b']]);
});

test('parts are spaced in proportion to the files already handed over (each add costs more)', () => {
  expect(partSpacing(0)).toBe(100);
  expect(partSpacing(2_000)).toBe(100);
  expect(partSpacing(10_000)).toBe(500);
  const parts: FileDescriptor[][] = [];
  const p = createParts(
    (f) => parts.push(f),
    () => Date.now(),
  );
  p.push(Array.from({ length: 6_000 }, (_, i) => ({ name: `f${i}` })));
  vi.advanceTimersByTime(150);
  p.push(files('late'));
  vi.advanceTimersByTime(149);
  expect(parts).toHaveLength(1);
  vi.advanceTimersByTime(1);
  expect(parts).toHaveLength(2);
});
