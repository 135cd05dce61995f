/**
 * A fixed-row-height virtual list: only the rows in view (plus a few either side) are rendered,
 * so 10,000 files cost as much as 15. The scroll container keeps the full height with padding.
 */
import { type RefObject, useEffect, useLayoutEffect, useState } from 'react';

export interface Range {
  start: number;
  end: number;
  /** Space above and below the rendered rows, in px. */
  before: number;
  after: number;
}

/** Which rows of `count` (each `rowHeight` px) to render for a viewport at `scrollTop`. */
export function visibleRange(
  count: number,
  rowHeight: number,
  scrollTop: number,
  viewport: number,
  overscan = 4,
): Range {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const start = Math.max(0, Math.min(count, first - overscan));
  const end = Math.min(count, first + Math.ceil(viewport / rowHeight) + overscan);
  return {
    start,
    end: Math.max(start, end),
    before: start * rowHeight,
    after: (count - Math.max(start, end)) * rowHeight,
  };
}

const useIsoLayoutEffect = typeof window === 'undefined' ? useEffect : useLayoutEffect;

/** Tracks the scroll position and height of `ref` and returns the rows to render. */
export function useVirtualList(
  ref: RefObject<HTMLElement | null>,
  count: number,
  rowHeight: number,
  fallbackHeight = 400,
): Range {
  const [view, setView] = useState({ top: 0, height: fallbackHeight });
  useIsoLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    let frame = 0;
    const measure = () => {
      frame = 0;
      setView((prev) => {
        const next = { top: el.scrollTop, height: el.clientHeight || fallbackHeight };
        return prev.top === next.top && prev.height === next.height ? prev : next;
      });
    };
    const onScroll = () => {
      if (!frame) frame = requestAnimationFrame(measure);
    };
    measure();
    el.addEventListener('scroll', onScroll, { passive: true });
    const resize = typeof ResizeObserver === 'function' ? new ResizeObserver(onScroll) : null;
    resize?.observe(el);
    return () => {
      el.removeEventListener('scroll', onScroll);
      resize?.disconnect();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [ref, fallbackHeight]);
  return visibleRange(count, rowHeight, view.top, view.height);
}
