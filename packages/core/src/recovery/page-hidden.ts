/** Telling recovery's journal (`journal.ts`) that the page may be going away. */

/**
 * Calls `hidden` when the page may be going away: `pagehide` (closed, reloaded, navigated away)
 * and `visibilitychange` to hidden (a mobile browser may discard a hidden page without another
 * event). Nothing outside a browser.
 */
export function onPageHidden(hidden: () => void): () => void {
  const page = globalThis as Partial<Pick<Window, 'addEventListener' | 'removeEventListener' | 'document'>>;
  const onVisibility = () => {
    if (page.document?.visibilityState === 'hidden') hidden();
  };
  page.addEventListener?.('pagehide', hidden);
  page.document?.addEventListener('visibilitychange', onVisibility);
  return () => {
    page.removeEventListener?.('pagehide', hidden);
    page.document?.removeEventListener('visibilitychange', onVisibility);
  };
}
