/**
 * Link import without the UI: URL normalisation and validation (spec section 5), and the remote
 * file record made from the companion's `POST /url/meta` answer. Framework-free.
 */
import type { FileDescriptor, UrlMeta } from '@ferry/core';

/** Adds `http://` when the URL has no protocol; returns null unless the result is http(s). */
export function normaliseUrl(input: string): string | null {
  const text = input.trim();
  if (!text) return null;
  const withProtocol = /^[a-z][a-z0-9+.-]*:/i.test(text) && !/^[^:/]+:\d/.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withProtocol);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!url.hostname) return null;
  return withProtocol;
}

/** The remote file record for an imported link; it uploads through the companion. */
export function linkDescriptor(companionUrl: string, url: string, meta: Partial<UrlMeta>): FileDescriptor {
  const fallback = decodeURIComponent(new URL(url).pathname.split('/').pop() || '') || 'download';
  return {
    isRemote: true,
    source: 'url',
    name: meta.name || fallback,
    type: meta.type || 'application/octet-stream',
    size: typeof meta.size === 'number' ? meta.size : null,
    data: null,
    remote: { companionUrl, url, body: { url } },
  };
}
