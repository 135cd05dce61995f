/**
 * The engine the `ferry*.test.ts` files drive: one `Ferry` per test on a `ManualUploader`, with a
 * network the test turns off and on, on fake timers, destroyed after each test. `ferry` and
 * `uploader` are live bindings: always the running test's.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import { Ferry, type FerryOptions } from '../ferry.ts';
import { ManualUploader } from './manual-uploader.ts';

export let ferry: Ferry;
export let uploader: ManualUploader;
let online = true;
/** Where the engine listens for `online` and `offline`. */
export const network = new EventTarget();

export function setOnline(value: boolean): void {
  online = value;
}

/** A fresh engine (and uploader) for the running test; `options` override the defaults. */
export function make(options: Partial<FerryOptions> = {}): Ferry {
  uploader = new ManualUploader();
  ferry = new Ferry({ uploader, online: { isOnline: () => online, target: network }, ...options });
  return ferry;
}

/** Registers the calling test file's hooks: fake timers and a network that is on; cleanup. */
export function useEngine(): void {
  beforeEach(() => {
    vi.useFakeTimers();
    online = true;
  });
  afterEach(() => {
    ferry?.destroy();
    vi.useRealTimers();
  });
}

export const blob = (size: number) => new Blob([new Uint8Array(size)]);

/** Resolves once no file has its size pending (a large batch's sizes are read after adding). */
export function sizesRead(f: Ferry): Promise<void> {
  return new Promise((ok) => {
    if (f.getState().sizesPending === 0) return ok();
    const off = f.subscribe((s) => {
      if (s.sizesPending > 0) return;
      off();
      ok();
    });
  });
}
