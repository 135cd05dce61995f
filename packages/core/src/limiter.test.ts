import { describe, expect, test } from 'vitest';
import { Limiter } from './limiter.ts';

describe('Limiter', () => {
  test('0 means unlimited', async () => {
    const limiter = new Limiter(0);
    await Promise.all(Array.from({ length: 100 }, () => limiter.acquire()));
    expect(limiter.active).toBe(100);
  });

  test('at most `limit` at once, first come first served, release is idempotent', async () => {
    const limiter = new Limiter(2);
    const order: number[] = [];
    const a = await limiter.acquire();
    const b = await limiter.acquire();
    const c = limiter.acquire().then((r) => {
      order.push(3);
      return r;
    });
    const d = limiter.acquire().then((r) => {
      order.push(4);
      return r;
    });
    expect(limiter.active).toBe(2);
    expect(limiter.waiting).toBe(2);
    a();
    a();
    const releaseC = await c;
    expect(order).toEqual([3]);
    expect(limiter.active).toBe(2);
    b();
    await d;
    expect(order).toEqual([3, 4]);
    releaseC();
    expect(limiter.active).toBe(1);
  });

  test('an aborted waiter leaves the queue without taking a slot', async () => {
    const limiter = new Limiter(1);
    const first = await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort(new Error('paused'));
    await expect(waiting).rejects.toThrow('paused');
    expect(limiter.waiting).toBe(0);
    first();
    expect(limiter.active).toBe(0);
  });
});
