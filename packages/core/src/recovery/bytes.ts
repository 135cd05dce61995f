/**
 * Where a recovered file's bytes come from after a reload. A File System Access handle costs
 * nothing to keep (the bytes stay where they are, however large); other files up to a size
 * are copied to the Origin Private File System, or into IndexedDB where there is no OPFS; the
 * rest are not kept and come back as ghosts. A failed copy (quota...) is a ghost too, never an
 * error the page sees. Small files go into IndexedDB, many per transaction: for a file of a few
 * KiB, creating, writing and closing an OPFS file costs the page more than uploading it.
 */
import { BLOBS, type RecoveryDb } from './db.ts';

/** The part of `FileSystemFileHandle` used here (permission calls are Chromium's, not in TS's DOM). */
export interface FileHandleLike {
  readonly kind: 'file';
  readonly name: string;
  getFile(): Promise<File>;
  queryPermission?(descriptor: { mode: 'read' }): Promise<PermissionState>;
  requestPermission?(descriptor: { mode: 'read' }): Promise<PermissionState>;
}

/** How a file's bytes were kept; `pending` while the copy runs. */
export type BytesKind = 'handle' | 'opfs' | 'idb' | 'none' | 'pending';

/** What reading kept bytes gave: the file, nothing (a ghost), or a handle that needs permission. */
export type Loaded = { blob: File } | { ghost: true; needsPermission?: boolean };

/** Files up to this size are copied into IndexedDB in batches rather than to OPFS (1 MiB). */
export const SMALL_COPY_SIZE = 1024 * 1024;

/** Copies are at most this large unless configured (256 MiB). */
export const DEFAULT_MAX_COPY_SIZE = 256 * 1024 * 1024;

/** The record fields the bytes are checked against (a changed file on disk is not the same file). */
export interface Identity {
  name: string;
  type: string;
  size: number | null;
  lastModified: number | null;
}

/** One file whose kept bytes {@link ByteKeeper.loadAll} reads. */
export interface KeptBytes {
  id: string;
  kind: BytesKind;
  who: Identity;
  handle: FileHandleLike | undefined;
}

interface Dir {
  getFileHandle(name: string, options?: { create?: boolean }): Promise<FileSystemFileHandle>;
  removeEntry(name: string): Promise<void>;
  keys?(): AsyncIterable<string>;
}

export class ByteKeeper {
  readonly #db: RecoveryDb;
  readonly #dirName: string;
  readonly #maxCopySize: number;
  #dir: Promise<Dir | null> | undefined;
  /** IndexedDB copies to delete in the next transaction, with its promise. */
  #idbDrops: { ids: string[]; done: Promise<void> } | undefined;

  constructor(scope: string, db: RecoveryDb, options: { maxCopySize?: number; opfs?: boolean } = {}) {
    this.#db = db;
    this.#dirName = `ferry-recovery-${encodeURIComponent(scope)}`;
    this.#maxCopySize = options.maxCopySize ?? DEFAULT_MAX_COPY_SIZE;
    if (options.opfs === false) this.#dir = Promise.resolve(null);
  }

  /** Keeps `blob`'s bytes for file `id`; how they were kept. */
  async keep(id: string, blob: Blob, handle: FileHandleLike | undefined): Promise<BytesKind> {
    if (handle) return 'handle';
    if (blob.size > this.#maxCopySize) return 'none';
    const dir = await this.#opfs();
    try {
      if (dir) {
        const file = await dir.getFileHandle(id, { create: true });
        const writable = await file.createWritable();
        // pipeTo closes the writable at the end and aborts it on error.
        await blob.stream().pipeTo(writable);
        return 'opfs';
      }
      await this.#db.write(BLOBS, [[id, blob]]);
      return 'idb';
    } catch {
      await this.drop(id, dir ? 'opfs' : 'idb');
      return 'none';
    }
  }

  /** Whether `blob` is copied with {@link keepSmall} (small, and no handle to keep instead). */
  isSmall(blob: Blob, handle: FileHandleLike | undefined): boolean {
    return !handle && blob.size <= Math.min(SMALL_COPY_SIZE, this.#maxCopySize);
  }

  /** Copies small files into IndexedDB in one transaction; how each was kept ('none' on failure). */
  async keepSmall(entries: [string, Blob][]): Promise<BytesKind[]> {
    try {
      await this.#db.write(BLOBS, entries);
      return entries.map(() => 'idb');
    } catch {
      await this.#db
        .write(
          BLOBS,
          [],
          entries.map(([id]) => id),
        )
        .catch(() => undefined);
      return entries.map(() => 'none');
    }
  }

  /**
   * The kept bytes of many files, in their order: the IndexedDB copies in one transaction, the
   * others (OPFS, handles) side by side, so no file waits for another's read.
   */
  async loadAll(files: readonly KeptBytes[]): Promise<Loaded[]> {
    const inDb = files.filter((f) => f.kind === 'idb');
    const ids = inDb.map((f) => f.id);
    // Unreadable (a closed database...): every copy is a ghost, as a missing one is.
    const copies = await this.#db.getMany<Blob>(BLOBS, ids).catch(() => []);
    const byId = new Map(inDb.map((f, i) => [f.id, copies[i]]));
    return Promise.all(
      files.map((f) => (f.kind === 'idb' ? asFile(byId.get(f.id), f.who) : this.load(f.id, f.kind, f.who, f.handle))),
    );
  }

  /** The kept bytes of `id` as a File named like the record, or a ghost when they are gone or changed. */
  async load(
    id: string,
    kind: BytesKind,
    who: Identity,
    handle: FileHandleLike | undefined,
    ask = false,
  ): Promise<Loaded> {
    try {
      let blob: Blob | undefined;
      if (kind === 'handle' && handle) {
        const permission = await (ask ? handle.requestPermission : handle.queryPermission)?.call(handle, {
          mode: 'read',
        });
        if (permission !== undefined && permission !== 'granted') return { ghost: true, needsPermission: true };
        const file = await handle.getFile();
        if (file.size !== who.size || (who.lastModified !== null && file.lastModified !== who.lastModified))
          return { ghost: true };
        return { blob: file };
      }
      if (kind === 'opfs') {
        const dir = await this.#opfs();
        blob = dir ? await (await dir.getFileHandle(id)).getFile() : undefined;
      } else if (kind === 'idb') {
        blob = await this.#db.get<Blob>(BLOBS, id);
      }
      return asFile(blob, who);
    } catch {
      return { ghost: true };
    }
  }

  /** Frees the kept bytes of `id` (nothing to free for a handle). */
  async drop(id: string, kind: BytesKind): Promise<void> {
    try {
      if (kind === 'opfs' || kind === 'pending') await (await this.#opfs())?.removeEntry(id);
    } catch {
      // Already gone.
    }
    if (kind === 'idb' || kind === 'pending') await this.#dropFromDb(id);
  }

  /** Deletes an IndexedDB copy; the drops of one task share a transaction. */
  #dropFromDb(id: string): Promise<void> {
    if (!this.#idbDrops) {
      const ids: string[] = [];
      const done = Promise.resolve().then(() => {
        this.#idbDrops = undefined;
        return this.#db.write(BLOBS, [], ids).catch(() => undefined); // already gone
      });
      this.#idbDrops = { ids, done };
    }
    this.#idbDrops.ids.push(id);
    return this.#idbDrops.done;
  }

  /** How many copies are kept (OPFS entries plus IndexedDB blobs): for tests and diagnostics. */
  async count(): Promise<number> {
    let n = await this.#db.count(BLOBS);
    const dir = await this.#opfs();
    if (dir?.keys) for await (const _ of dir.keys()) n += 1;
    return n;
  }

  #opfs(): Promise<Dir | null> {
    this.#dir ??= (async () => {
      try {
        const root = await navigator.storage.getDirectory();
        return (await root.getDirectoryHandle(this.#dirName, { create: true })) as unknown as Dir;
      } catch {
        return null;
      }
    })();
    return this.#dir;
  }
}

/** A kept copy as a File named like its record; a ghost when it is gone or no longer the record's size. */
function asFile(blob: Blob | undefined, who: Identity): Loaded {
  if (!blob || blob.size !== who.size) return { ghost: true };
  // A File over the kept blob (no copy), with the original name, type and time.
  const options: FilePropertyBag = { type: who.type };
  if (who.lastModified !== null) options.lastModified = who.lastModified;
  return { blob: new File([blob], who.name, options) };
}
