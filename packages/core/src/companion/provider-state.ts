/**
 * What a provider's browser is made of, apart from its behaviour (`provider-browser.ts`): what it
 * needs from the engine, its state (folder or search results, selection, a rate-limit wait), its
 * options, and how a picked item becomes a remote file record.
 */
import { noRestrictions } from '../restrictions.ts';
import type { FileDescriptor, InfoType, Restrictions } from '../types.ts';
import type { ProviderItem } from './provider.ts';
import type { Waiting } from './provider-wait.ts';

/** What the browser needs from the engine (a `Ferry` fits). */
export interface BrowserHost {
  addFiles(descriptors: Iterable<FileDescriptor>): string[];
  readonly restrictions: Readonly<Restrictions>;
  getState(): { fileIds: readonly string[] };
  info(message: string, type?: InfoType, duration?: number): string;
  i18n(key: string, vars?: Record<string, string | number>): string;
}

/** A selected folder's walk: its accepted file count so far, and how it went. */
export interface FolderCount {
  status: 'loading' | 'done' | 'error';
  files: number;
}

export interface Crumb {
  requestPath: string;
  name: string;
}

export interface BrowserState {
  /** `auth`: not connected (the 'Authorization required' view); `loading`: a folder is opening. */
  status: 'idle' | 'auth' | 'connecting' | 'loading' | 'ready' | 'error';
  /** The last failure, worded for people. */
  error: string | null;
  username: string | null;
  /** From the root to the open folder. */
  crumbs: readonly Crumb[];
  /** The loaded pages of the open folder. */
  items: readonly ProviderItem[];
  nextPagePath: string | null;
  loadingMore: boolean;
  filter: string;
  view: 'list' | 'grid';
  /** A search provider's last query ('' before the first search). */
  query: string;
  /** A rate limit being waited out (the request goes again when `seconds` reaches 0), else null. */
  waiting: Waiting | null;
  /** Selected items by `requestPath`, in any folder. */
  selected: ReadonlyMap<string, ProviderItem>;
  /** File counts of the selected folders, by `requestPath`. */
  folders: ReadonlyMap<string, FolderCount>;
  /** The item a shift-click extends from. */
  anchor: string | null;
  adding: boolean;
}

export interface ProviderBrowserOptions {
  /** The provider's display name (the root crumb). */
  name: string;
  /** The root folder's path: `root` for Drive, `recent` for Instagram. */
  rootFolder: string;
  /** A search provider (Unsplash): no sign-in, results of a query instead of folders. */
  search?: boolean;
  /** Signs in with a form ({@link ProviderBrowser.signIn}: WebDAV's server URL), not the popup. */
  simpleAuth?: boolean;
  view?: 'list' | 'grid';
}

/** How many files the selection adds: picked files plus the files of picked folders. */
export interface SelectionSummary {
  files: number;
  folders: number;
  total: number;
  /** A folder is still being counted. */
  counting: boolean;
}

/** The remote file record of a provider item; `relativePath` for files found under a folder. */
export function providerDescriptor(provider: string, item: ProviderItem, relativePath?: string): FileDescriptor {
  return {
    isRemote: true,
    source: provider,
    name: item.name,
    type: item.mimeType || 'application/octet-stream',
    size: typeof item.size === 'number' && item.size > 0 ? item.size : null,
    data: null,
    ...(relativePath ? { relativePath } : {}),
    ...(item.thumbnail ? { preview: item.thumbnail } : {}),
    remote: { providerName: provider, requestPath: item.requestPath, body: { fileId: item.id } },
  };
}

/** The restrictions a single item is checked against when listed (counts are checked on add). */
export function perFile(r: Readonly<Restrictions>): Restrictions {
  return {
    ...noRestrictions,
    allowedFileTypes: r.allowedFileTypes,
    maxFileSize: r.maxFileSize,
    minFileSize: r.minFileSize,
  };
}
