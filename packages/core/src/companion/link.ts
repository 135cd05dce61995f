/**
 * Link import: URL normalisation and validation (spec section 5), the remote file record made
 * from the companion's `POST /url/meta` answer, and `importLink`, which adds that record to an
 * engine. Failures come back as codes; the UI turns them into its messages.
 */
import type { FileDescriptor } from '../types.ts';
import { UploaderError } from '../uploader.ts';
import type { FetchLike } from './http.ts';
import { type UrlMeta, urlMeta } from './remote.ts';

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

/**
 * The remote file record for an imported link; it uploads through `companionUrl` when given, else
 * through the engine's companion.
 */
export function linkDescriptor(url: string, meta: Partial<UrlMeta>, companionUrl?: string): FileDescriptor {
  const fallback = decodeURIComponent(new URL(url).pathname.split('/').pop() || '') || 'download';
  return {
    isRemote: true,
    source: 'url',
    name: meta.name || fallback,
    type: meta.type || 'application/octet-stream',
    size: typeof meta.size === 'number' ? meta.size : null,
    data: null,
    remote: { ...(companionUrl !== undefined ? { companionUrl } : {}), url, body: { url } },
  };
}

/**
 * Why a link was not imported: `invalid-url` (not an http(s) address), `fetch-failed` (the
 * companion answered that it could not fetch the file), `companion-error` (no companion is
 * configured, or the call to it failed altogether).
 */
export type LinkErrorCode = 'invalid-url' | 'fetch-failed' | 'companion-error';

/** `id` is null when the engine refused the file (a restriction, which it reports itself). */
export type LinkImportResult = { ok: true; id: string | null } | { ok: false; code: LinkErrorCode; details?: string };

/** The part of an engine link import needs. */
export interface LinkTarget {
  readonly companionUrl: string | undefined;
  /** Headers for the companion call (`FerryOptions.headers`). */
  requestHeaders?(): Promise<Record<string, string>>;
  addFile(descriptor: FileDescriptor): string | null;
}

/** Asks the companion what is behind `raw` and adds it to `engine` as a remote file. */
export async function importLink(
  engine: LinkTarget,
  raw: string,
  options: { companionUrl?: string; fetch?: FetchLike } = {},
): Promise<LinkImportResult> {
  const url = normaliseUrl(raw);
  if (!url) return { ok: false, code: 'invalid-url' };
  const companionUrl = options.companionUrl ?? engine.companionUrl;
  if (companionUrl === undefined) return { ok: false, code: 'companion-error', details: 'No companionUrl is set' };
  try {
    const headers = (await engine.requestHeaders?.()) ?? {};
    const meta = await urlMeta(companionUrl, url, options.fetch, headers);
    // A file imported through another companion than the engine's names it: that one fetches it.
    return { ok: true, id: engine.addFile(linkDescriptor(url, meta, options.companionUrl)) };
  } catch (error) {
    const answered = error instanceof UploaderError && error.status !== undefined;
    return { ok: false, code: answered ? 'fetch-failed' : 'companion-error', details: (error as Error).message };
  }
}
