import { expect, test } from 'vitest';
import { visibleRange } from './useVirtualList.ts';

test.each([
  // count, row, scrollTop, viewport -> start, end, before, after
  [10_000, 64, 0, 400, 0, 11, 0, (10_000 - 11) * 64],
  [10_000, 64, 64 * 5000, 400, 4996, 5011, 4996 * 64, (10_000 - 5011) * 64],
  [10_000, 64, 64 * 10_000, 400, 9996, 10_000, 9996 * 64, 0],
  [3, 64, 0, 400, 0, 3, 0, 0],
  [0, 64, 0, 400, 0, 0, 0, 0],
])('visibleRange(%d rows of %d px at %d in %d px)', (count, row, top, view, start, end, before, after) => {
  expect(visibleRange(count, row, top, view)).toEqual({ start, end, before, after });
});
