/**
 * Turning descriptors into file records, and the running figures (count, total size,
 * fingerprints) that restriction checks read in O(1) per file.
 */
import { emptyProgress } from './reducer.ts';
import { fingerprint, type StoreFigures } from './restrictions.ts';
import type { FerryFile, FileDescriptor } from './types.ts';

let counter = 0;
const prefix = Math.floor(Math.random() * 36 ** 4).toString(36);

/** A fresh id, unique within the page. */
export function newFileId(): string {
  counter += 1;
  return `ferry-${prefix}-${counter.toString(36)}`;
}

/** Builds the record for a descriptor; `meta` is the engine's global meta. */
export function createFile(d: FileDescriptor, id: string, meta: Readonly<Record<string, string>>): FerryFile {
  const data = d.data ?? null;
  const name = d.name ?? (data && 'name' in data ? (data as File).name : '') ?? '';
  const type = d.type || data?.type || '';
  const size = data ? data.size : (d.size ?? null);
  const isRemote = d.isRemote ?? (!data && d.remote !== undefined);
  const file: FerryFile = {
    id,
    source: d.source ?? (isRemote ? 'remote' : 'local'),
    name: name || 'untitled',
    type,
    data,
    size,
    meta: { ...meta, ...d.meta, name: name || 'untitled', type },
    state: 'waiting',
    progress: emptyProgress(size),
    error: null,
    isPaused: false,
    isRemote,
  };
  if (d.relativePath) {
    file.relativePath = d.relativePath;
    file.meta.relativePath = d.relativePath;
  }
  if (d.remote) file.remote = d.remote;
  if (d.preview) file.preview = d.preview;
  return file;
}

export function fileKey(f: FerryFile): string {
  const remoteKey = f.remote ? String(f.remote.body?.fileId ?? f.remote.body?.url ?? f.remote.url ?? '') : undefined;
  return fingerprint({ ...f, remoteKey });
}

/** Count, total size and fingerprints of the files in the store, kept up to date on add/remove. */
export class FileIndex {
  #count = 0;
  #totalSize = 0;
  readonly #keys = new Map<string, string>();
  readonly #keyOf = new Map<string, string>();

  figures(file: FerryFile): StoreFigures {
    return { count: this.#count, totalSize: this.#totalSize, isDuplicate: this.#keys.has(fileKey(file)) };
  }

  add(file: FerryFile): void {
    const key = fileKey(file);
    this.#count += 1;
    this.#totalSize += file.size ?? 0;
    this.#keys.set(key, file.id);
    this.#keyOf.set(file.id, key);
  }

  remove(file: FerryFile): void {
    const key = this.#keyOf.get(file.id);
    if (key === undefined) return;
    this.#count -= 1;
    this.#totalSize -= file.size ?? 0;
    this.#keyOf.delete(file.id);
    if (this.#keys.get(key) === file.id) this.#keys.delete(key);
  }

  clear(): void {
    this.#count = 0;
    this.#totalSize = 0;
    this.#keys.clear();
    this.#keyOf.clear();
  }
}
