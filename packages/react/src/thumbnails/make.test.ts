import { expect, test } from 'vitest';
import { cappedSize } from './make.ts';

test.each([
  [800, 600, 800, 600],
  [8192, 1024, 4096, 512], // over the per-side cap
  [4000, 3000, 2581, 1936], // 12 MP: scaled to about 5 MP
  [1, 10_000, 1, 4096],
])('cappedSize(%d, %d) = %d x %d', (w, h, cw, ch) => {
  const size = cappedSize(w, h);
  expect(size).toEqual({ width: cw, height: ch });
  expect(size.width * size.height).toBeLessThanOrEqual(5_000_000);
});
