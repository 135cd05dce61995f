/**
 * Copying a link for the "copy link" action of an uploaded file: the async Clipboard API where
 * the page may use it, else the old selection-and-copy through a hidden text area.
 */

/** Copies `text`; whether the browser took it. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (typeof navigator !== 'undefined' && navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Denied (no focus, no permission): try the selection route below.
  }
  if (typeof document === 'undefined') return false;
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

/** `url` made absolute against the page, so a copied link works elsewhere. */
export function absoluteUrl(url: string, base = typeof location === 'undefined' ? undefined : location.href): string {
  try {
    return new URL(url, base).href;
  } catch {
    return url;
  }
}
