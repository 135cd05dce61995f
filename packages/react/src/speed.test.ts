import { expect, test } from 'vitest';
import { createSpeedEstimator, formatDuration } from './speed.ts';

test('the first interval seeds the speed; later ones move it smoothly, not in jumps', () => {
  const s = createSpeedEstimator(2000);
  s.sample(0, 0);
  expect(s.eta(1000)).toBeNull();
  s.sample(1000, 1_000_000); // 1 MB/s
  expect(s.speed()).toBe(1_000_000);
  s.sample(2000, 1_000_000); // a stalled second
  // One second at half-life 2 s moves about 29 % of the way to 0.
  expect(s.speed()).toBeCloseTo(1_000_000 * 0.5 ** 0.5, 0);
  expect(s.eta(7_071_068)).toBe(10);
});

test('reset forgets the history', () => {
  const s = createSpeedEstimator();
  s.sample(0, 0);
  s.sample(1000, 500);
  s.reset();
  expect(s.speed()).toBe(0);
  expect(s.eta(10)).toBeNull();
});

test.each([
  [5, '5s'],
  [65, '1m 5s'],
  [3720, '1h 2m'],
])('formatDuration(%d) = %s', (seconds, text) => {
  expect(formatDuration(seconds)).toBe(text);
});
