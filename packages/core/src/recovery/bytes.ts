/**
 * Where a recovered file's bytes come from after a reload. A File System Access handle costs
 * nothing to keep (the bytes stay where they are, however large); other files up to a size
 * are copied to the Origin Private File System, or into IndexedDB where there is no OPFS; the
 * rest are not kept and come back as ghosts. A failed copy (quota...) is a ghost too, never an
 * error the page sees. Small files go into IndexedDB, many per transaction: for a file of a few
 * KiB, creating, writing and closing an OPFS file costs the page more than uploading it.
 *
 * {@link ByteKeeper} keeps and reads the bytes; {@link CopyQueue} decides when: copies run in
 * turn, and a file that completed before its turn (small files often do) is never copied. A
 * completed file's bytes are freed at once.
 */
import { fittedBatch, type SliceOptions } from '../slicer.ts';
import type { FerryFile } from '../types.ts';
import { BLOBS, type RecoveryDb } from './db.ts';
import type { RecordTable, SavedRecord } from './table.ts';

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

/** Most small files, and bytes, copied in one IndexedDB transaction. */
const COPY_BATCH_FILES = 100;
const COPY_BATCH_BYTES = 16 * 1024 * 1024;

/** A file whose bytes wait to be copied, with the record the copy is for. */
interface CopyJob {
  id: string;
  data: Blob;
  record: SavedRecord;
}

/** What the copy queue needs from recovery. */
export interface CopyHost {
  /** Whether the file `id` has completed (its bytes are not needed). */
  isComplete(id: string): boolean;
  /** The File System Access handle the page picked `data` through, if any. */
  handleOf(data: Blob): FileHandleLike | undefined;
  /** The record of `id` changed (how its bytes are kept): write it soon. */
  changed(id: string): void;
  /** Resolves when the next copy may start (while a large batch's sizes are read: after them). */
  pace(): Promise<void>;
}

/** Keeps the bytes of new (and revived) files, one copy after another. */
export class CopyQueue {
  readonly #keeper: ByteKeeper;
  readonly #records: RecordTable;
  readonly #host: CopyHost;
  readonly #jobs: CopyJob[] = [];
  /** The small files whose IndexedDB transaction is under way. */
  #inFlight: CopyJob[] = [];
  #copies: Promise<void> = Promise.resolve();
  readonly #now: () => number;
  readonly #sliceMs: number;
  /** Small files the next transaction takes ({@link #copyQueued}). */
  #copyBatch = COPY_BATCH_FILES;

  /** `slicing`: the engine's slices (`sizing.ts`); a transaction's copies take about half of one. */
  constructor(keeper: ByteKeeper, records: RecordTable, host: CopyHost, slicing: SliceOptions = {}) {
    this.#keeper = keeper;
    this.#records = records;
    this.#host = host;
    this.#now = slicing.now ?? (() => performance.now());
    this.#sliceMs = slicing.sliceMs ?? 8;
  }

  /** Queues a copy of `file`'s bytes (none for a completed file or one without bytes). */
  copy(file: FerryFile): void {
    const data = file.data;
    if (!data || file.state === 'complete') return;
    const record = this.#records.of(file);
    record.bytes = 'pending';
    record.lastModified = (data as Partial<File>).lastModified ?? null;
    record.handle = this.#host.handleOf(data);
    this.#jobs.push({ id: file.id, data, record });
    // A drain is already queued when the queue was not empty.
    if (this.#jobs.length === 1) this.#copies = this.#copies.then(() => this.#copyQueued());
  }

  /** Resolves once every queued copy is done. */
  drained(): Promise<void> {
    return this.#copies;
  }

  /**
   * The page may be going away: the small files whose copy is under way are recorded as kept in
   * IndexedDB, before the journal writes their records in this task. Their transaction has asked
   * to commit already and lands though the page goes (a copy begun now would not: Chromium drops
   * a transaction with blobs that the page leaves before they are written); were it lost after
   * all, the file comes back a ghost, as one whose record said `pending` did.
   */
  hidden(): void {
    for (const job of this.#inFlight) {
      if (this.#records.get(job.id) !== job.record || job.record.bytes !== 'pending') continue;
      job.record.bytes = 'idb';
      this.#host.changed(job.id);
    }
  }

  /** Frees the kept bytes of a file that completed (a copy still running sees it itself). */
  free(id: string): void {
    const record = this.#records.get(id);
    if (!record || record.bytes === 'pending') return;
    void this.#keeper.drop(id, record.bytes);
    record.bytes = 'none';
    delete record.handle;
  }

  /**
   * Copies run in turn: small files many per transaction, others one at a time. Small files
   * have often finished uploading before their turn: a completed file needs no bytes kept, and
   * skipping it spares a write and a delete.
   */
  async #copyQueued(): Promise<void> {
    while (this.#jobs.length > 0) {
      // Sizes being read come first: copying 10,000 small files as they were sized took a
      // tenth of the main thread from them (see Journal.copyPace). Waiting also gathers more
      // files per transaction.
      await this.#host.pace();
      const started = this.#now();
      const batch = this.#nextCopies().filter((job) => this.#stillWanted(job));
      const [first] = batch;
      if (!first) continue;
      const one = batch.length === 1 && !this.#keeper.isSmall(first.data, first.record.handle);
      if (!one) this.#inFlight = batch;
      let kinds: BytesKind[];
      if (one) kinds = [await this.#keeper.keep(first.id, first.data, first.record.handle)];
      else {
        // The transaction is begun (its files cloned) within the call: as many files next time
        // as fit in half a slice (100 took a task of several ms after a 10,000-file pick).
        const copying = this.#keeper.keepSmall(batch.map((job) => [job.id, job.data]));
        this.#copyBatch = fittedBatch(batch.length, this.#now() - started, this.#sliceMs / 2, COPY_BATCH_FILES);
        kinds = await copying;
      }
      this.#inFlight = [];
      await Promise.all(batch.map((job, i) => this.#kept(job, kinds[i] ?? 'none')));
    }
  }

  /** The next copies from the queue: consecutive small files together, or one other file. */
  #nextCopies(): CopyJob[] {
    let take = 0;
    let bytes = 0;
    for (const job of this.#jobs) {
      const small = this.#keeper.isSmall(job.data, job.record.handle);
      if (!small) {
        if (take === 0) take = 1;
        break;
      }
      if (take === this.#copyBatch || (take > 0 && bytes + job.data.size > COPY_BATCH_BYTES)) break;
      bytes += job.data.size;
      take += 1;
    }
    return this.#jobs.splice(0, take);
  }

  /** Whether a queued copy is still needed: the file is still there and not completed. */
  #stillWanted(job: CopyJob): boolean {
    if (this.#records.get(job.id) !== job.record) return false;
    if (!this.#host.isComplete(job.id)) return true;
    job.record.bytes = 'none';
    this.#host.changed(job.id);
    return false;
  }

  /** Records how a copy kept the bytes, or frees them when the file left or completed meanwhile. */
  async #kept(job: CopyJob, kind: BytesKind): Promise<void> {
    if (this.#records.get(job.id) !== job.record) return void this.#keeper.drop(job.id, kind);
    if (this.#host.isComplete(job.id)) {
      await this.#keeper.drop(job.id, kind);
      job.record.bytes = 'none';
    } else job.record.bytes = kind;
    this.#host.changed(job.id);
  }
}
