/**
 * How components hear of the engine's changes. The store can change hundreds of times a second
 * (small uploads finishing one after another, each a state change), and every change makes each
 * subscribed component run its selector and possibly render. A screen shows at most one frame
 * per ~16 ms, so components are told at most once per frame: a change after a quiet frame is told
 * at once (so a click still renders in the same task), and changes that follow within the frame
 * are told together at its end. The engine's own state is never delayed; only the telling is.
 */
import type { Ferry } from '@ferry/core';

/** One frame at 60 Hz, in ms. */
export const FRAME_MS = 16;

type Subscribe = (listener: () => void) => () => void;

const perEngine = new WeakMap<Ferry, Subscribe>();

/** A `subscribe` for `useSyncExternalStore` that tells of `ferry`'s changes at most once a frame. */
export function framedSubscribe(ferry: Ferry): Subscribe {
  let subscribe = perEngine.get(ferry);
  if (!subscribe) {
    subscribe = framed(ferry.subscribe);
    perEngine.set(ferry, subscribe);
  }
  return subscribe;
}

/** Wraps a store's `subscribe`: one subscription to the store, shared by every listener. */
export function framed(source: (listener: () => void) => () => void, frame = FRAME_MS): Subscribe {
  const listeners = new Set<() => void>();
  let unsubscribe: (() => void) | undefined;
  let lastTold = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tell = () => {
    timer = undefined;
    lastTold = Date.now();
    for (const listener of [...listeners]) listener();
  };
  const changed = () => {
    if (timer !== undefined) return;
    const wait = lastTold + frame - Date.now();
    if (wait <= 0) tell();
    else timer = setTimeout(tell, wait);
  };
  return (listener) => {
    listeners.add(listener);
    unsubscribe ??= source(changed);
    return () => {
      listeners.delete(listener);
      if (listeners.size > 0) return;
      unsubscribe?.();
      unsubscribe = undefined;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
  };
}
