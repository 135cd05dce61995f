/**
 * The open folder's items, virtualised like the file list (only the rows in view are in the
 * DOM, so a 10,000-item folder scrolls smoothly), as a list or a grid. Scrolling near the end
 * loads the next page. Arrow keys, Home and End move between items (scrolling them into view);
 * Space toggles, Shift+Space or Shift+click selects a range.
 */
import type { BrowserState, ProviderItem as Item, ProviderBrowser } from '@ferry/core';
import {
  type KeyboardEvent,
  type RefObject,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';
import { useVirtualList } from '../hooks/useVirtualList.ts';
import { useI18n } from '../i18n.ts';
import { ProviderItem } from './ProviderItem.tsx';

export const LIST_ROW = 44;
export const GRID_ROW = 150;
const GRID_CELL = 140;

/** The width of `ref`, kept up to date (for the grid's column count). */
function useWidth(ref: RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(el.clientWidth);
    measure();
    const observer = typeof ResizeObserver === 'function' ? new ResizeObserver(measure) : null;
    observer?.observe(el);
    return () => observer?.disconnect();
  }, [ref]);
  return width;
}

export function ProviderItems({ browser, state }: { browser: ProviderBrowser; state: BrowserState }) {
  const t = useI18n();
  const idPrefix = useId();
  const scroller = useRef<HTMLDivElement>(null);
  const items = browser.visible();
  const grid = state.view === 'grid';
  const width = useWidth(scroller);
  const cols = grid ? Math.max(1, Math.floor((width || GRID_CELL * 4) / GRID_CELL)) : 1;
  const rowHeight = grid ? GRID_ROW : LIST_ROW;
  const rows = Math.ceil(items.length / cols);
  const range = useVirtualList(scroller, rows, rowHeight);
  const pendingFocus = useRef<number | null>(null);
  const shift = useRef(false);

  // Another folder, filter or view starts at the top (and the virtual range is measured again).
  const folderKey = state.crumbs[state.crumbs.length - 1]?.requestPath;
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || (folderKey === undefined && !grid && state.filter === '')) return;
    el.scrollTop = 0;
    el.dispatchEvent(new Event('scroll'));
  }, [folderKey, grid, state.filter]);

  // Near the end: the next page.
  useEffect(() => {
    if (state.nextPagePath !== null && !state.loadingMore && range.end >= rows - 3) void browser.loadMore();
  }, [browser, range.end, rows, state.nextPagePath, state.loadingMore]);

  // Focus the item the keyboard moved to, once it is rendered.
  useEffect(() => {
    const target = pendingFocus.current;
    if (target === null) return;
    const box = scroller.current?.querySelector<HTMLElement>(
      `[data-index="${target}"] input, [data-index="${target}"] button`,
    );
    if (box) {
      pendingFocus.current = null;
      box.focus();
    }
  });

  const onToggle = useCallback((item: Item, range: boolean) => browser.toggle(item, range || shift.current), [browser]);
  const onOpen = useCallback((item: Item) => void browser.openFolder(item), [browser]);

  const onKeyDown = (event: KeyboardEvent<HTMLUListElement>) => {
    shift.current = event.shiftKey;
    const from = Number((event.target as HTMLElement).closest('[data-index]')?.getAttribute('data-index') ?? -1);
    if (from < 0) return;
    const step: Record<string, number> = {
      ArrowDown: cols,
      ArrowUp: -cols,
      ...(grid ? { ArrowRight: 1, ArrowLeft: -1 } : {}),
      Home: -from,
      End: items.length - 1 - from,
    };
    const delta = step[event.key];
    if (delta === undefined) return;
    event.preventDefault();
    const to = Math.max(0, Math.min(items.length - 1, from + delta));
    const el = scroller.current;
    if (el) {
      const top = Math.floor(to / cols) * rowHeight;
      if (top < el.scrollTop) el.scrollTop = top;
      else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
    }
    pendingFocus.current = to;
    scroller.current?.querySelector<HTMLElement>(`[data-index="${to}"] input, [data-index="${to}"] button`)?.focus();
  };

  const folderName = state.crumbs[state.crumbs.length - 1]?.name ?? '';
  const first = range.start * cols;
  const slice = items.slice(first, Math.min(items.length, range.end * cols));
  const allSelected = browser.allSelected();
  return (
    <div className="ferry-provider-items" data-view={state.view}>
      <div className="ferry-provider-listbar">
        <label className="ferry-provider-all">
          <input
            type="checkbox"
            checked={allSelected}
            disabled={items.length === 0}
            onChange={() => void browser.toggleAll()}
          />
          {t('selectAll')}
        </label>
      </div>
      <div className="ferry-provider-scroll" ref={scroller} data-testid="ferry-provider-items">
        {items.length === 0 ? (
          <p className="ferry-provider-empty">
            {state.filter
              ? t('noMatches')
              : browser.searchable
                ? t('noResults', { query: state.query })
                : t('emptyFolder')}
          </p>
        ) : (
          <ul
            className="ferry-provider-list"
            aria-label={folderName}
            style={{
              paddingTop: range.before,
              paddingBottom: range.after,
              ...(grid ? { gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))` } : {}),
            }}
            onKeyDown={onKeyDown}
            onKeyUp={(e) => {
              shift.current = e.shiftKey;
            }}
            onPointerDown={(e) => {
              shift.current = e.shiftKey;
            }}
          >
            {slice.map((item, i) => (
              <ProviderItem
                key={item.requestPath}
                item={item}
                index={first + i}
                setSize={items.length}
                selected={state.selected.has(item.requestPath)}
                count={item.isFolder ? state.folders.get(item.requestPath) : undefined}
                problem={browser.problem(item)}
                grid={grid}
                idPrefix={idPrefix}
                style={{ height: rowHeight }}
                onToggle={onToggle}
                onOpen={onOpen}
              />
            ))}
          </ul>
        )}
        {state.loadingMore && (
          <p className="ferry-provider-more" role="status">
            {t('loading')}
          </p>
        )}
      </div>
    </div>
  );
}
