/**
 * Turning descriptors into file records, and the running figures (count, total size,
 * fingerprints) that restriction checks read in O(1) per file.
 */
import { fingerprint, type StoreFigures } from './restrictions.ts';
import type { FerryFile, FileDescriptor } from './types.ts';

let counter = 0;
const prefix = Math.floor(Math.random() * 36 ** 4).toString(36);

/** A fresh id, unique within the page. */
export function newFileId(): string {
  counter += 1;
  return `ferry-${prefix}-${counter.toString(36)}`;
}

/**
 * Builds the record for a descriptor; `meta` is the engine's global meta. With `deferSize`, a
 * file with bytes gets `size: null` and `sizePending` instead of reading `data.size`: Chromium
 * looks a picked file's size up on disk on the first read, synchronously (see `sizing.ts`).
 */
export function createFile(
  d: FileDescriptor,
  id: string,
  meta: Readonly<Record<string, string>>,
  deferSize = false,
): FerryFile {
  const data = d.data ?? null;
  const name = d.name || (data as Partial<File> | null)?.name || 'untitled';
  const type = d.type || data?.type || '';
  const pending = deferSize && data !== null;
  const size = data ? (pending ? null : data.size) : (d.size ?? null);
  const isRemote = d.isRemote ?? (!data && d.remote !== undefined);
  // Built as one literal (no spreads unless there is meta to merge): this runs once per file.
  const fileMeta: Record<string, string> =
    d.meta || hasKeys(meta) ? { ...meta, ...d.meta, name, type } : { name, type };
  const file: FerryFile = {
    id,
    source: d.source ?? (isRemote ? 'remote' : 'local'),
    name,
    type,
    data,
    size,
    meta: fileMeta,
    state: 'waiting',
    progress: { bytesUploaded: 0, bytesTotal: size, percentage: 0, uploadStarted: null, uploadComplete: false },
    error: null,
    isPaused: false,
    isRemote,
  };
  if (pending) file.sizePending = true;
  if (d.relativePath) {
    file.relativePath = d.relativePath;
    fileMeta.relativePath = d.relativePath;
  }
  if (d.remote) file.remote = d.remote;
  if (d.preview) file.preview = d.preview;
  return file;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

export function fileKey(f: FerryFile): string {
  const body = f.remote?.body;
  const remoteKey = f.remote ? String(body?.fileId ?? body?.url ?? f.remote.url ?? '') : undefined;
  return fingerprint({
    source: f.source,
    name: f.name,
    type: f.type,
    size: f.size,
    relativePath: f.relativePath,
    data: f.data,
    remoteKey,
  });
}

/**
 * Count, total size and fingerprints of the files in the store, kept up to date on add/remove.
 * A file whose size is still being read counts towards the count only; its size and key join
 * when it is {@link settle}d (its fingerprint needs the size and modification time).
 */
export class FileIndex {
  #count = 0;
  #totalSize = 0;
  readonly #keys = new Map<string, string>();
  /** Key by file id; null while the file's size is pending. */
  readonly #keyOf = new Map<string, string | null>();
  readonly #sizeOf = new Map<string, number>();

  /** The figures a restriction check of `file` needs; `key` is its {@link fileKey} (null: unknown yet). */
  figures(key: string | null): StoreFigures {
    return { count: this.#count, totalSize: this.#totalSize, isDuplicate: key !== null && this.#keys.has(key) };
  }

  /** Enters a file; `key` null for a file whose size is pending. */
  add(file: FerryFile, key: string | null): void {
    this.#count += 1;
    this.#keyOf.set(file.id, null);
    if (key !== null) this.settle(file.id, file.size, key);
  }

  /** A pending file's size (and with it its key) is known. */
  settle(id: string, size: number | null, key: string): void {
    this.#totalSize += size ?? 0;
    this.#sizeOf.set(id, size ?? 0);
    this.#keys.set(key, id);
    this.#keyOf.set(id, key);
  }

  remove(file: FerryFile): void {
    const key = this.#keyOf.get(file.id);
    if (key === undefined) return;
    this.#count -= 1;
    this.#totalSize -= this.#sizeOf.get(file.id) ?? 0;
    this.#keyOf.delete(file.id);
    this.#sizeOf.delete(file.id);
    if (key !== null && this.#keys.get(key) === file.id) this.#keys.delete(key);
  }

  clear(): void {
    this.#count = 0;
    this.#totalSize = 0;
    this.#keys.clear();
    this.#keyOf.clear();
    this.#sizeOf.clear();
  }
}
