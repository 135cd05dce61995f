/**
 * Recovery after a reload or a crash (opt-in: `new Ferry({ recovery: true })`). It watches the
 * engine's store and writes each file's record (meta, progress, upload URL, S3 multipart and
 * companion tokens) to IndexedDB, soon after a state or bookkeeping change and at most once a
 * throttle window for progress; it keeps the bytes through {@link ByteKeeper}. On start it reads
 * the records back: files whose bytes (or, for remote files, token) survived continue where the
 * uploader left off (tus from the server's offset, S3 from ListParts, remote transfers by
 * reattaching to their socket); the others come back as ghosts that resume when the same file
 * (name, size, modification time) is added again. A completed file's bytes are freed at once;
 * its record stays (so it comes back completed, not sent again) until it leaves the engine or
 * every file has completed, when the upload is over and everything is deleted.
 */

import { defaultYield } from '../slicer.ts';
import type { FerryFile, FerryState, FileDescriptor, InfoType } from '../types.ts';
import { ByteKeeper, type BytesKind, type FileHandleLike, type Loaded } from './bytes.ts';
import { FILES, RecoveryDb } from './db.ts';

export type { FileHandleLike } from './bytes.ts';

export interface RecoveryOptions {
  /** Files larger than this are not copied (handles are kept whatever the size); default 256 MiB. */
  maxCopySize?: number;
  /** Longest delay before progress is written, in ms (default 1000). */
  throttle?: number;
  /** IndexedDB to use (tests); the page's by default. */
  indexedDB?: IDBFactory;
  /** Copy into the Origin Private File System when it exists (default true); IndexedDB otherwise. */
  opfs?: boolean;
}

/** What the record keeps of a file: everything but the bytes and the preview URL. */
export type SavedFile = Omit<FerryFile, 'data' | 'preview'>;

/** One record in IndexedDB. */
export interface SavedRecord {
  file: SavedFile;
  lastModified: number | null;
  bytes: BytesKind;
  handle?: FileHandleLike;
}

/** What the UI shows about a recovery: how many came back, which are ghosts, which need access. */
export interface RecoverySnapshot {
  restored: number;
  ghosts: readonly string[];
  needPermission: readonly string[];
}

/** What recovery needs from the engine. */
export interface RecoveryHost {
  readonly scope: string;
  getState(): FerryState;
  subscribe(listener: (state: FerryState) => void): () => void;
  /** Puts recovered records into the store (no admission: they were admitted before). */
  restore(files: FerryFile[]): void;
  /** Uploads these files (they are `waiting`). */
  run(ids: string[]): void;
  /** Gives a ghost its bytes back and, when `run`, resumes it. */
  revive(id: string, data: File, run: boolean): void;
  removeFiles(ids: string[]): void;
  info(message: string, type: InfoType, duration: number): void;
  i18n(key: string, vars?: Record<string, string | number>): string;
}

/** Records written per IndexedDB transaction. */
const WRITE_BATCH = 500;
/** States in which a file was moving when the page went away: it resumes on restore. */
const MOVING = new Set(['uploading', 'preprocessing', 'postprocessing']);
/** Changes written soon (progress waits for the throttle). */
const soon = (a: FerryFile, b: FerryFile) =>
  a.state !== b.state ||
  a.tus !== b.tus ||
  a.s3Multipart !== b.s3Multipart ||
  a.serverToken !== b.serverToken ||
  a.ghost !== b.ghost ||
  a.meta !== b.meta ||
  a.name !== b.name;

export class Recovery {
  readonly #host: RecoveryHost;
  readonly #db: RecoveryDb;
  readonly #bytes: ByteKeeper;
  readonly #throttle: number;
  /** Files as last written (or being written), by id. */
  #seen: Readonly<Record<string, FerryFile>> = {};
  readonly #records = new Map<string, SavedRecord>();
  readonly #dirty = new Set<string>();
  readonly #deleted = new Set<string>();
  /** Files of a finished upload (every file complete): nothing left to recover, records deleted. */
  readonly #finished = new Set<string>();
  readonly #handles = new WeakMap<Blob, FileHandleLike>();
  /** Ghosts that were moving when the page went away: re-adding them resumes the upload. */
  readonly #resumeOnRevive = new Set<string>();
  #copies: Promise<void> = Promise.resolve();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** A diff of the store is waiting for its turn ({@link #observeSoon}). */
  #observing = false;
  #writing: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | undefined;
  #snapshot: RecoverySnapshot = { restored: 0, ghosts: [], needPermission: [] };
  readonly #listeners = new Set<() => void>();
  #broken = false;

  constructor(host: RecoveryHost, options: RecoveryOptions = {}) {
    this.#host = host;
    this.#db = new RecoveryDb(host.scope, options.indexedDB);
    this.#bytes = new ByteKeeper(host.scope, this.#db, options);
    this.#throttle = options.throttle ?? 1000;
  }

  /** Reads the records of an earlier page back into the engine, then follows the store. */
  async start(): Promise<void> {
    let saved: Map<string, SavedRecord>;
    try {
      saved = await this.#db.all<SavedRecord>(FILES);
    } catch {
      this.#broken = true;
      return;
    }
    const files: FerryFile[] = [];
    const run: string[] = [];
    const ghosts: string[] = [];
    const needPermission: string[] = [];
    for (const [id, record] of saved) {
      if (this.#host.getState().files[id]) continue;
      const file = await this.#revive(id, record);
      if (file.ghost) ghosts.push(id);
      if (file.ghost && needsPermissionOf(file)) needPermission.push(id);
      if (file.state === 'waiting' && MOVING.has(record.file.state) && !file.ghost) run.push(id);
      if (file.ghost && (MOVING.has(record.file.state) || record.file.state === 'waiting'))
        this.#resumeOnRevive.add(id);
      this.#records.set(id, record);
      files.push(file);
    }
    if (files.length > 0) this.#host.restore(files);
    // Restored files are as saved; files added before now are new (their bytes get kept).
    this.#seen = Object.fromEntries(files.map((f) => [f.id, f]));
    this.#unsubscribe = this.#host.subscribe(() => this.#observeSoon());
    this.#observe(this.#host.getState());
    if (files.length > 0) {
      this.#set({ restored: files.length, ghosts, needPermission });
      const message = this.#host.i18n('recoveredFiles', { smart_count: files.length });
      const extra = ghosts.length > 0 ? ` ${this.#host.i18n('recoveredGhosts', { smart_count: ghosts.length })}` : '';
      this.#host.info(`${message}${extra}`, ghosts.length > 0 ? 'warning' : 'info', 6000);
      if (run.length > 0) this.#host.run(run);
    }
  }

  /** Notes the handles of descriptors (File System Access picks) and revives matching ghosts; returns the rest. */
  claim(descriptors: FileDescriptor[]): FileDescriptor[] {
    const ghosts = this.getSnapshot().ghosts;
    // No ghost to bring back (the usual case, and the one of a 10,000-file pick): only handles
    // are noted, and the descriptors go on as they came, without a copy.
    if (ghosts.length === 0) {
      for (const d of descriptors) if (d.data && d.handle) this.#handles.set(d.data, d.handle);
      return descriptors;
    }
    const rest: FileDescriptor[] = [];
    for (const d of descriptors) {
      if (d.data && d.handle) this.#handles.set(d.data, d.handle);
      const match = d.data instanceof File && ghosts.length > 0 ? this.#ghostMatching(d.data) : undefined;
      if (match && d.data instanceof File) {
        const run = this.#resumeOnRevive.delete(match);
        this.#dropGhost(match);
        this.#host.revive(match, d.data, run);
      } else rest.push(d);
    }
    return rest;
  }

  /** Asks again for access to the kept handles (call from a click); revives what it can. */
  async reconnect(): Promise<void> {
    for (const id of this.getSnapshot().needPermission) {
      const record = this.#records.get(id);
      if (!record) continue;
      const loaded = await this.#bytes.load(id, record.bytes, identity(record), record.handle, true);
      if ('blob' in loaded) {
        const run = this.#resumeOnRevive.delete(id);
        this.#dropGhost(id);
        this.#host.revive(id, loaded.blob, run);
      }
    }
  }

  /** Forgets every restored file that has not completed: removes it (and its server upload). */
  discard(): void {
    const state = this.#host.getState();
    const restored = [...this.#records.keys()].filter((id) => state.files[id] && state.files[id]?.state !== 'complete');
    this.#set({ restored: 0, ghosts: [], needPermission: [] });
    this.#host.removeFiles(restored);
  }

  /** Hides the restored message (the files stay). */
  dismiss(): void {
    this.#set({ ...this.#snapshot, restored: 0 });
  }

  getSnapshot = (): RecoverySnapshot => this.#snapshot;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Resolves once every pending write and copy is done (tests; before a deliberate reload). */
  async flush(): Promise<void> {
    this.#observeNow();
    await this.#copies;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#write();
    }
    await this.#writing;
  }

  /** How many records and byte copies are stored (0 and 0 when everything is cleaned up). */
  async stored(): Promise<{ records: number; copies: number }> {
    await this.flush();
    return { records: await this.#db.count(FILES), copies: await this.#bytes.count() };
  }

  stop(): void {
    this.#observeNow();
    this.#unsubscribe?.();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#write();
  }

  async #revive(id: string, record: SavedRecord): Promise<FerryFile> {
    const base: FerryFile = { ...record.file, data: null, isPaused: false };
    if (record.file.state === 'complete' || record.file.isRemote) {
      return MOVING.has(base.state) ? { ...base, state: 'waiting' } : base;
    }
    const loaded: Loaded = await this.#bytes.load(id, record.bytes, identity(record), record.handle);
    if ('blob' in loaded) {
      const state = MOVING.has(base.state) ? 'waiting' : base.state;
      return { ...base, data: loaded.blob, state, isPaused: state === 'paused' };
    }
    const ghost: FerryFile = { ...base, state: 'paused', isPaused: true, ghost: true };
    if (loaded.needsPermission) permissionNeeded.add(ghost);
    return ghost;
  }

  #ghostMatching(file: File): string | undefined {
    for (const id of this.#snapshot.ghosts) {
      const record = this.#records.get(id);
      if (!record) continue;
      const who = identity(record);
      if (
        who.name === file.name &&
        who.size === file.size &&
        (who.lastModified ?? file.lastModified) === file.lastModified
      )
        return id;
    }
    return undefined;
  }

  #dropGhost(id: string): void {
    const s = this.#snapshot;
    this.#set({
      ...s,
      ghosts: s.ghosts.filter((g) => g !== id),
      needPermission: s.needPermission.filter((g) => g !== id),
    });
  }

  #set(next: RecoverySnapshot): void {
    this.#snapshot = next;
    for (const l of this.#listeners) l();
  }

  /**
   * Diffs the store once the main thread has had a turn, not inside the dispatch that changed
   * it: the diff walks every file, and the dispatch that adds 10,000 picked files runs in the
   * task the page is waiting on to show them. Changes made meanwhile are diffed together.
   * The turn is the slicer's (`scheduler.yield` where there is one), not a timer: timers wait
   * behind the size reader's slices, and one diff after all of them copied 10,000 files in one
   * long task.
   */
  #observeSoon(): void {
    if (this.#observing) return;
    this.#observing = true;
    void defaultYield().then(() => this.#observeNow());
  }

  /** Runs a diff that is waiting for its turn, now. */
  #observeNow(): void {
    if (!this.#observing) return;
    this.#observing = false;
    this.#observe(this.#host.getState());
  }

  /** Diffs the store against what was last seen and schedules the writes. */
  #observe(state: FerryState): void {
    if (this.#broken || state.files === this.#seen) return;
    let urgent = false;
    for (const id of state.fileIds) {
      const file = state.files[id];
      const before = this.#seen[id];
      if (!file || file === before || this.#finished.has(id)) continue;
      this.#dirty.add(id);
      if (!before || soon(before, file)) urgent = true;
      // A file whose size is pending waits: copying reads its size and modification time, which
      // Chromium looks up on disk synchronously (see sizing.ts); it is copied once sized.
      if (!file.sizePending && (!before || before.sizePending || (before.data !== file.data && file.data)))
        this.#copy(file);
      if (file.state === 'complete' && before?.state !== 'complete') this.#freeBytes(id);
    }
    for (const id in this.#seen) {
      if (state.files[id]) continue;
      this.#finished.delete(id);
      this.#dirty.delete(id);
      this.#deleted.add(id);
      urgent = true;
      const record = this.#records.get(id);
      this.#records.delete(id);
      if (record) void this.#bytes.drop(id, record.bytes);
      if (this.#snapshot.ghosts.includes(id)) this.#dropGhost(id);
    }
    this.#seen = state.files;
    if (this.#records.size > 0 && state.fileIds.every((id) => state.files[id]?.state === 'complete')) {
      this.#forgetFinished(state.fileIds);
      urgent = true;
    }
    this.#schedule(urgent ? 0 : this.#throttle);
  }

  /** Every file has completed: the upload is over, so its records and bytes go. */
  #forgetFinished(ids: readonly string[]): void {
    for (const id of ids) {
      this.#finished.add(id);
      this.#dirty.delete(id);
      this.#deleted.add(id);
      const record = this.#records.get(id);
      this.#records.delete(id);
      if (record && record.bytes !== 'pending') void this.#bytes.drop(id, record.bytes);
    }
  }

  /** Keeps the bytes of a new (or revived) file, one copy at a time. */
  #copy(file: FerryFile): void {
    const data = file.data;
    if (!data || file.state === 'complete') return;
    const record = this.#recordOf(file);
    record.bytes = 'pending';
    record.lastModified = (data as Partial<File>).lastModified ?? null;
    record.handle = this.#handles.get(data);
    this.#copies = this.#copies.then(async () => {
      if (this.#records.get(file.id) !== record) return;
      // Copies run one at a time, so a small file has often finished uploading before its
      // turn: a completed file needs no bytes kept, and skipping it spares a write and a delete.
      if (this.#host.getState().files[file.id]?.state === 'complete') {
        record.bytes = 'none';
        this.#dirty.add(file.id);
        this.#schedule(0);
        return;
      }
      const kind = await this.#bytes.keep(file.id, data, record.handle);
      if (this.#records.get(file.id) !== record) return void this.#bytes.drop(file.id, kind);
      // Completed while copying: the copy is not needed.
      if (this.#host.getState().files[file.id]?.state === 'complete') {
        await this.#bytes.drop(file.id, kind);
        record.bytes = 'none';
      } else record.bytes = kind;
      this.#dirty.add(file.id);
      this.#schedule(0);
    });
  }

  #freeBytes(id: string): void {
    const record = this.#records.get(id);
    if (!record || record.bytes === 'pending') return; // the copy sees the completion itself
    void this.#bytes.drop(id, record.bytes);
    record.bytes = 'none';
    delete record.handle;
  }

  #recordOf(file: FerryFile): SavedRecord {
    let record = this.#records.get(file.id);
    if (!record) {
      record = {
        file: saved(file),
        lastModified: file.sizePending ? null : ((file.data as Partial<File> | null)?.lastModified ?? null),
        bytes: 'none',
      };
      this.#records.set(file.id, record);
    }
    return record;
  }

  #schedule(delay: number): void {
    if (this.#dirty.size === 0 && this.#deleted.size === 0) return;
    if (this.#timer !== undefined) {
      if (delay > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#write();
    }, delay);
  }

  /** Writes the dirty records and deletes the removed ones in one transaction, after the last write. */
  #write(): void {
    const state = this.#host.getState();
    const puts: [string, unknown][] = [];
    for (const id of this.#dirty) {
      const file = state.files[id];
      if (!file) continue;
      const record = this.#recordOf(file);
      // A ghost keeps the state it had before the reload (it is only shown paused).
      record.file = file.ghost ? { ...saved(file), state: record.file.state } : saved(file);
      puts.push([id, record]);
    }
    const deletes = [...this.#deleted];
    this.#dirty.clear();
    this.#deleted.clear();
    // In transactions of WRITE_BATCH records, one after the other: cloning 10,000 records in
    // one go would hold the main thread for one long task.
    for (let i = 0; i < Math.max(puts.length, 1); i += WRITE_BATCH) {
      const batch = puts.slice(i, i + WRITE_BATCH);
      const gone = i === 0 ? deletes : [];
      this.#writing = this.#writing
        .then(() => this.#db.write(FILES, batch, gone))
        .catch(() => {
          // Quota or a closed database: recovery is best effort, the page goes on.
        });
    }
  }
}

/** Ghosts whose handle needs permission again (kept off the file record, which is plain data). */
const permissionNeeded = new WeakSet<FerryFile>();
const needsPermissionOf = (file: FerryFile) => permissionNeeded.has(file);

function identity(record: SavedRecord) {
  return { name: record.file.name, type: record.file.type, size: record.file.size, lastModified: record.lastModified };
}

function saved(file: FerryFile): SavedFile {
  // Nothing reads a pending size after a reload: the record keeps it unknown (null).
  const { data: _data, preview: _preview, ghost: _ghost, sizePending: _pending, ...rest } = file;
  return rest;
}
