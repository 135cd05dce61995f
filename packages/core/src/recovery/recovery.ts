/**
 * Recovery after a reload or a crash (opt-in: `new Ferry({ recovery: true })`). While the page
 * runs, the journal (`journal.ts`) writes each file's record to IndexedDB and the copy queue
 * (`bytes.ts`) keeps its bytes. On start this coordinator reads the records back: files whose
 * bytes (or, for remote files, token) survived continue where the uploader left off (tus from
 * the server's offset, S3 from ListParts, remote transfers by reattaching to their socket); the
 * others come back as ghosts (`ghosts.ts`) that resume when the same file is added again.
 *
 * Nothing restored is shown as work the server has done: a record that is not complete but
 * names its server upload (a tus URL) is asked about first (`RecoveryHost.uploaded`, bounded by
 * {@link ASK_TIMEOUT}), and one the server has finished comes back complete. A small tus file
 * learns its URL only with the answer to its one request: if the page went away before that
 * answer, nothing can be asked, and it is sent again.
 *
 * The parts share the records through one {@link RecordTable}.
 */
import { completed } from '../reducer.ts';
import type { SliceOptions } from '../slicer.ts';
import type { FerryFile, FerryState, FileDescriptor, InfoType } from '../types.ts';
import type { UploadResult } from '../uploader.ts';
import { ByteKeeper, CopyQueue, type Loaded } from './bytes.ts';
import { FILES, RecoveryDb } from './db.ts';
import { Ghosts, identity, type Revived } from './ghosts.ts';
import { Journal } from './journal.ts';
import { RecordTable, type SavedRecord } from './table.ts';

export type { FileHandleLike } from './bytes.ts';
export type { Revived } from './ghosts.ts';
export type { SavedFile, SavedRecord } from './table.ts';

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
  /** Gives ghosts their bytes (and size) back in one state change, and resumes those with `run`. */
  revive(revived: Revived[]): void;
  /**
   * Asks the server whether the upload a restored file's bookkeeping names is complete (its
   * uploader's `uploaded`): the result when it is, undefined when it is not or cannot say.
   */
  uploaded?(file: FerryFile, signal: AbortSignal): Promise<UploadResult | undefined>;
  /** Adds files that turned out to be no ghost's, as new files (recovery does not see them again). */
  add(descriptors: FileDescriptor[]): void;
  /** How the engine slices size reads (`sizing.ts`); re-added files are compared in the same way. */
  readonly slicing?: SliceOptions;
  removeFiles(ids: string[]): void;
  info(message: string, type: InfoType, duration: number): void;
  i18n(key: string, vars?: Record<string, string | number>): string;
}

/** Longest wait, in ms, for the server to say whether restored uploads are finished. */
const ASK_TIMEOUT = 5000;
/** States in which a file was moving when the page went away: it resumes on restore. */
const MOVING = new Set(['uploading', 'preprocessing', 'postprocessing']);

export class Recovery {
  readonly #host: RecoveryHost;
  readonly #db: RecoveryDb;
  readonly #bytes: ByteKeeper;
  readonly #records = new RecordTable();
  readonly #journal: Journal;
  readonly #copies: CopyQueue;
  readonly #ghosts: Ghosts;
  #snapshot: RecoverySnapshot = { restored: 0, ghosts: [], needPermission: [] };
  readonly #listeners = new Set<() => void>();
  #started: Promise<void> | undefined;

  constructor(host: RecoveryHost, options: RecoveryOptions = {}) {
    this.#host = host;
    this.#db = new RecoveryDb(host.scope, options.indexedDB);
    this.#bytes = new ByteKeeper(host.scope, this.#db, options);
    this.#ghosts = new Ghosts(this.#records, {
      ghosts: () => this.#snapshot.ghosts,
      drop: (ids) => this.#dropGhosts(ids),
      revive: (revived) => host.revive(revived),
      add: (descriptors) => host.add(descriptors),
      slicing: host.slicing,
    });
    this.#journal = new Journal(
      this.#db,
      this.#records,
      {
        getState: () => host.getState(),
        subscribe: (listener) => host.subscribe(listener),
        copy: (file) => this.#copies.copy(file),
        free: (id) => this.#copies.free(id),
        drop: (id, kind) => void this.#bytes.drop(id, kind),
        left: (ids) => {
          if (this.#snapshot.ghosts.some((g) => ids.has(g))) this.#dropGhosts(ids);
        },
        hidden: () => this.#copies.hidden(),
      },
      options.throttle ?? 1000,
      host.slicing,
    );
    this.#copies = new CopyQueue(
      this.#bytes,
      this.#records,
      {
        isComplete: (id) => host.getState().files[id]?.state === 'complete',
        handleOf: (data) => this.#ghosts.handleOf(data),
        changed: (id) => this.#journal.changed(id),
        pace: () => this.#journal.copyPace(),
      },
      host.slicing,
    );
  }

  /** Reads the records of an earlier page back into the engine, then follows the store (once). */
  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  /** Resolves once the records of the last visit are back in the engine (or there were none). */
  ready(): Promise<void> {
    return this.start();
  }

  async #start(): Promise<void> {
    let saved: Map<string, SavedRecord>;
    try {
      saved = await this.#db.all<SavedRecord>(FILES);
    } catch {
      return;
    }
    const { records, ordered } = this.#records.inAddOrder(saved);
    if (ordered.length > 0) this.#journal.put(ordered);
    // Asked first, so that nothing the server has finished is ever shown as work left.
    const finished = await this.#askServer(records);
    const loaded = await this.#loadBytes(records.filter(([id]) => !finished.has(id)));
    const files: FerryFile[] = [];
    const run: string[] = [];
    const ghosts: string[] = [];
    const needPermission: string[] = [];
    for (const [id, record] of records) {
      if (this.#host.getState().files[id]) continue;
      const done = finished.get(id);
      if (done) this.#finishedOnServer(id, record);
      const file = done ? completed(plain(record), done) : revived(record, loaded.get(id));
      if (file.ghost) ghosts.push(id);
      if (file.ghost && needsPermissionOf(file)) needPermission.push(id);
      if (file.state === 'waiting' && MOVING.has(record.file.state) && !file.ghost) run.push(id);
      if (file.ghost && (MOVING.has(record.file.state) || record.file.state === 'waiting'))
        this.#ghosts.resumeOnRevive(id);
      this.#records.set(id, record);
      files.push(file);
    }
    if (files.length > 0) this.#host.restore(files);
    // Restored files are as saved (those the server finished are written again, complete);
    // files added before now are new (their bytes get kept).
    this.#journal.follow(files.filter((f) => !finished.has(f.id)));
    if (files.length > 0) {
      this.#set({ restored: files.length, ghosts, needPermission });
      const message = this.#host.i18n('recoveredFiles', { smart_count: files.length });
      const extra = ghosts.length > 0 ? ` ${this.#host.i18n('recoveredGhosts', { smart_count: ghosts.length })}` : '';
      this.#host.info(`${message}${extra}`, ghosts.length > 0 ? 'warning' : 'info', 6000);
      if (run.length > 0) this.#host.run(run);
    }
  }

  /**
   * The records whose uploads the server has finished although the record does not say so (the
   * page went away before it heard, or before it wrote it down), with the server's result: each
   * upload the record names (a tus upload URL) is asked about, all at once, for at most
   * {@link ASK_TIMEOUT} ms. A server that does not answer leaves the record as it is.
   */
  async #askServer(records: readonly [string, SavedRecord][]): Promise<Map<string, UploadResult>> {
    const asking = records.filter(([, record]) => record.file.state !== 'complete' && record.file.tus?.uploadUrl);
    const finished = new Map<string, UploadResult>();
    if (asking.length === 0 || !this.#host.uploaded) return finished;
    const signal = AbortSignal.timeout(ASK_TIMEOUT);
    const answers = await Promise.all(
      asking.map(([, record]) => this.#host.uploaded?.(plain(record), signal).catch(() => undefined)),
    );
    answers.forEach((answer, i) => {
      const id = asking[i]?.[0];
      if (answer && id !== undefined) finished.set(id, answer);
    });
    return finished;
  }

  /** A record the server finished: its kept bytes go, and it is written again, complete. */
  #finishedOnServer(id: string, record: SavedRecord): void {
    if (record.bytes !== 'none') void this.#bytes.drop(id, record.bytes);
    record.bytes = 'none';
    delete record.handle;
    this.#journal.changed(id);
  }

  /** The kept bytes of the records that need them, by id: read together, not one after another. */
  async #loadBytes(records: readonly [string, SavedRecord][]): Promise<Map<string, Loaded>> {
    const wanted = records.filter(([, record]) => needsBytes(record));
    const loaded = await this.#bytes.loadAll(
      wanted.map(([id, record]) => ({ id, kind: record.bytes, who: identity(record), handle: record.handle })),
    );
    return new Map(wanted.map(([id], i) => [id, loaded[i] ?? { ghost: true }]));
  }

  /**
   * Notes the handles of descriptors (File System Access picks) and takes the files a ghost may
   * be waiting for; returns the others, to be added as new files (see `ghosts.ts`).
   */
  claim(descriptors: FileDescriptor[], deferSizes: boolean): FileDescriptor[] {
    return this.#ghosts.claim(descriptors, deferSizes);
  }

  /** Whether re-added files of a large batch are still being compared with the ghosts. */
  get comparing(): boolean {
    return this.#ghosts.comparing;
  }

  /** Resolves once every re-added file has been compared (revived, or added as a new file). */
  compared(): Promise<void> {
    return this.#ghosts.compared();
  }

  /** Asks again for access to the kept handles (call from a click); revives what it can. */
  async reconnect(): Promise<void> {
    for (const id of this.getSnapshot().needPermission) {
      const record = this.#records.get(id);
      if (!record) continue;
      const loaded = await this.#bytes.load(id, record.bytes, identity(record), record.handle, true);
      if ('blob' in loaded) this.#ghosts.reviveAll([{ id, data: loaded.blob, size: loaded.blob.size }]);
    }
  }

  /** Forgets every restored file that has not completed: removes it (and its server upload). */
  discard(): void {
    const state = this.#host.getState();
    const restored = this.#records.ids().filter((id) => state.files[id] && state.files[id]?.state !== 'complete');
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
    // Copies and writes paced while sizes are read go at once for it.
    const done = this.#journal.hurry();
    try {
      this.#journal.observeNow();
      await this.#copies.drained();
      await this.#journal.flush();
    } finally {
      done();
    }
  }

  /** How many records and byte copies are stored (0 and 0 when everything is cleaned up). */
  async stored(): Promise<{ records: number; copies: number }> {
    await this.flush();
    return { records: await this.#db.count(FILES), copies: await this.#bytes.count() };
  }

  stop(): void {
    this.#ghosts.stop();
    this.#journal.stop();
  }

  #dropGhosts(ids: ReadonlySet<string>): void {
    const s = this.#snapshot;
    this.#set({
      ...s,
      ghosts: s.ghosts.filter((g) => !ids.has(g)),
      needPermission: s.needPermission.filter((g) => !ids.has(g)),
    });
  }

  #set(next: RecoverySnapshot): void {
    this.#snapshot = next;
    for (const l of this.#listeners) l();
  }
}

/** Ghosts whose handle needs permission again (kept off the file record, which is plain data). */
const permissionNeeded = new WeakSet<FerryFile>();
const needsPermissionOf = (file: FerryFile) => permissionNeeded.has(file);

/** Whether a record comes back with bytes: not when completed (freed) or remote (the server has them). */
const needsBytes = (record: SavedRecord) => record.file.state !== 'complete' && !record.file.isRemote;

/** The record's file as it was saved, without bytes. */
const plain = (record: SavedRecord): FerryFile => ({ ...record.file, data: null, isPaused: false });

/**
 * The file a record comes back as, given its kept bytes (when it needs any): a file that was
 * moving waits to resume; one whose bytes are gone is a paused ghost.
 */
function revived(record: SavedRecord, loaded: Loaded | undefined): FerryFile {
  const base = plain(record);
  if (!needsBytes(record)) return MOVING.has(base.state) ? { ...base, state: 'waiting' } : base;
  if (loaded && 'blob' in loaded) {
    const state = MOVING.has(base.state) ? 'waiting' : base.state;
    return { ...base, data: loaded.blob, state, isPaused: state === 'paused' };
  }
  const ghost: FerryFile = { ...base, state: 'paused', isPaused: true, ghost: true };
  if (loaded?.needsPermission) permissionNeeded.add(ghost);
  return ghost;
}
