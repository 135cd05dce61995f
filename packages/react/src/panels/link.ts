/**
 * Link import without the UI: URL normalisation and validation (spec section 5), and the
 * companion's `POST /url/meta`. Framework-free.
 */
import type { FileDescriptor } from '@ferry/core';

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

export interface UrlMeta {
  name?: string;
  type?: string;
  size?: number | null;
}

/** Why a link import failed: the call itself, or an error answer about the file. */
export class LinkImportError extends Error {
  constructor(
    readonly code: 'failedToFetch' | 'failedToFetchFile',
    message: string,
  ) {
    super(message);
    this.name = 'LinkImportError';
  }
}

/** Asks the companion what is at `url`: name, type, size. */
export async function fetchUrlMeta(companionUrl: string, url: string, signal?: AbortSignal): Promise<UrlMeta> {
  let res: Response;
  try {
    res = await fetch(`${companionUrl.replace(/\/$/, '')}/url/meta`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ url }),
      credentials: 'same-origin',
      signal,
    });
  } catch (cause) {
    throw new LinkImportError('failedToFetch', String((cause as Error)?.message ?? cause));
  }
  let body: (UrlMeta & { error?: unknown; message?: string }) | null = null;
  try {
    body = (await res.json()) as UrlMeta & { error?: unknown };
  } catch {
    body = null;
  }
  if (body?.error) throw new LinkImportError('failedToFetchFile', String(body.message ?? body.error));
  if (!res.ok || !body) throw new LinkImportError('failedToFetch', body?.message ?? `HTTP ${res.status}`);
  return body;
}

/** The remote file record for an imported link; it uploads through the companion. */
export function linkDescriptor(companionUrl: string, url: string, meta: UrlMeta): FileDescriptor {
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
