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

/**
 * Tracks the scroll position and height of `ref` and returns the rows to render. Until the
 * first measure the viewport is taken as `fallbackHeight` px.
 *
 * The height is read where the browser has laid the page out already: in a ResizeObserver
 * callback (it reports the element once after the next layout, then on every resize), not
 * while mounting. Read in the commit of the render that mounts the list, `clientHeight` forced
 * a layout of the whole page in the middle of that task: about 12 ms of the task that adds
 * 10,000 picked files, done again by the frame that paints them.
 */
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
      // Read here, not in the updater: React may run that later, in a render, with layout dirty.
      const next = { top: el.scrollTop, height: el.clientHeight || fallbackHeight };
      setView((prev) => (prev.top === next.top && prev.height === next.height ? prev : next));
    };
    const onScroll = () => {
      if (!frame) frame = requestAnimationFrame(measure);
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    const resize = typeof ResizeObserver === 'function' ? new ResizeObserver(measure) : null;
    // Without ResizeObserver nothing reports the size later: measure now, as the only chance.
    if (resize) resize.observe(el);
    else measure();
    return () => {
      el.removeEventListener('scroll', onScroll);
      resize?.disconnect();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [ref, fallbackHeight]);
  return visibleRange(count, rowHeight, view.top, view.height);
}
