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
 * every file has completed, when the upload is over and everything is deleted. Each record
 * keeps its file's place in the add order, so the list comes back as the person built it.
 *
 * The records tell the truth after the page goes away at any moment: on `pagehide` (and when
 * the page is hidden) what changed is written at once, in one transaction begun in that task,
 * so a completion the page has seen is never lost to a pending timer. On start, a record that
 * is not complete but names its server upload (a tus URL) is asked about first
 * (`RecoveryHost.uploaded`): one the server has finished comes back complete, never as work
 * left or as a ghost. A small tus file learns its URL only with the answer to its one request:
 * if the page went away before that answer, nothing can be asked, and it is sent again.
 *
 * Files added in a large batch have their size pending for a while (`sizing.ts`); one saved
 * then has no size and no modification time in its record (reading either costs a disk lookup
 * in Chromium). It is saved all the same rather than held back until sized: after a reload the
 * list still shows every file that was added, with the meta typed for it, and a ghost says
 * which ones to add again; a file left out would be missed silently. Such a file never started
 * uploading (`upload()` waits for sizes), so there is no server offset to protect: when it is
 * added again, name, type and relative path (when it had one) are enough. A ghost with a size
 * still needs size and modification time to match, and an exact match wins over a name-only one.
 *
 * Comparing reads the re-added file's size, so it follows the batch: a small batch is compared
 * while adding, as before; in a large one (sizes deferred) the files a ghost may be waiting for
 * are held back and compared in time slices, as `sizing.ts` reads sizes. Meanwhile the ghosts
 * stay ghosts (nothing uploads on a guess); a file that turns out to be none of theirs is then
 * added as a new file.
 */
import { completed, type Revival } from '../reducer.ts';
import { DEFAULT_COMMIT_MS } from '../sizing.ts';
import { defaultYield, SlicedQueue, type SliceOptions } from '../slicer.ts';
import type { FerryFile, FerryState, FileDescriptor, InfoType } from '../types.ts';
import type { UploadResult } from '../uploader.ts';
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
  /**
   * Where the file stands in the add order: increasing, never reused, so a record needs no
   * rewrite when others are removed or added. Absent in records of versions before it.
   */
  order?: number;
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

/** A file whose bytes wait to be copied, with the record the copy is for. */
interface CopyJob {
  id: string;
  data: Blob;
  record: SavedRecord;
}

/** Most small files, and bytes, copied in one IndexedDB transaction. */
const COPY_BATCH_FILES = 100;
const COPY_BATCH_BYTES = 16 * 1024 * 1024;

/** A ghost's bytes found again (by a re-added file, or through its handle). */
export interface Revived extends Revival {
  /** Whether it resumes at once (it was moving or waiting when the page went away). */
  run: boolean;
}

/** A re-added file some ghost may be waiting for. */
interface Candidate {
  descriptor: FileDescriptor;
  data: File;
}

/** A candidate with the size and modification time it is compared on (read: a disk lookup). */
interface Measured extends Candidate {
  size: number;
  lastModified: number;
}

/** Records written per IndexedDB transaction. */
const WRITE_BATCH = 500;
/** Longest wait, in ms, for the server to say whether restored uploads are finished. */
const ASK_TIMEOUT = 5000;
/** States in which a file was moving when the page went away: it resumes on restore. */
const MOVING = new Set(['uploading', 'preprocessing', 'postprocessing']);
/**
 * Longest wait, in ms, before a change of the store is compared with what was last written. The
 * comparison walks every file, so changes that come together (hundreds of small uploads
 * finishing one after another) are compared once per window rather than once each.
 */
const OBSERVE_DELAY = 50;
/**
 * Changes written soon. Progress waits for the throttle, and so does a start (waiting to
 * uploading): a small file that finishes within the window is written once, complete, rather
 * than twice. A reload within that window brings such a file back waiting, not resuming.
 */
const soon = (a: FerryFile, b: FerryFile) =>
  (a.state !== b.state && !(a.state === 'waiting' && b.state === 'uploading')) ||
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
  /** Candidates of a large batch, measured and compared in time slices. */
  readonly #comparisons: SlicedQueue<Candidate, Measured>;
  #copies: Promise<void> = Promise.resolve();
  readonly #toCopy: CopyJob[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #observeTimer: ReturnType<typeof setTimeout> | undefined;
  /** A comparison waits for the main thread's next turn ({@link #changed}). */
  #observing = false;
  #writing: Promise<void> = Promise.resolve();
  /**
   * What the next transactions write: ids whose records are due (read from the store when their
   * transaction starts, so a later one never writes an older record), ids to delete, and records
   * to write as they are.
   */
  readonly #duePuts = new Set<string>();
  readonly #dueDeletes = new Set<string>();
  #dueRecords: [string, SavedRecord][] = [];
  #started: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;
  #unlisten: (() => void) | undefined;
  #snapshot: RecoverySnapshot = { restored: 0, ghosts: [], needPermission: [] };
  /** The add order the next new record takes: after every restored one. */
  #nextOrder = 0;
  readonly #listeners = new Set<() => void>();
  #broken = false;

  constructor(host: RecoveryHost, options: RecoveryOptions = {}) {
    this.#host = host;
    this.#db = new RecoveryDb(host.scope, options.indexedDB);
    this.#bytes = new ByteKeeper(host.scope, this.#db, options);
    this.#throttle = options.throttle ?? 1000;
    this.#comparisons = new SlicedQueue<Candidate, Measured>(
      {
        read: measure,
        commit: (measured) => {
          const others = this.#reviveMatching(measured);
          if (others.length > 0) this.#host.add(others);
        },
      },
      { commitMs: DEFAULT_COMMIT_MS, ...host.slicing },
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
      this.#broken = true;
      return;
    }
    const records = this.#inAddOrder(saved);
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
        this.#resumeOnRevive.add(id);
      this.#records.set(id, record);
      files.push(file);
    }
    if (files.length > 0) this.#host.restore(files);
    // Restored files are as saved (those the server finished are written again, complete);
    // files added before now are new (their bytes get kept).
    this.#seen = Object.fromEntries(files.filter((f) => !finished.has(f.id)).map((f) => [f.id, f]));
    this.#unsubscribe = this.#host.subscribe(() => this.#changed());
    this.#unlisten = onPageHidden(() => this.#writeNow());
    this.#observe(this.#host.getState());
    if (files.length > 0) {
      this.#set({ restored: files.length, ghosts, needPermission });
      const message = this.#host.i18n('recoveredFiles', { smart_count: files.length });
      const extra = ghosts.length > 0 ? ` ${this.#host.i18n('recoveredGhosts', { smart_count: ghosts.length })}` : '';
      this.#host.info(`${message}${extra}`, ghosts.length > 0 ? 'warning' : 'info', 6000);
      if (run.length > 0) this.#host.run(run);
    }
  }

  /**
   * The saved records in the order their files were added (IndexedDB gives them in key order,
   * and base-36 ids do not sort as they count). Records of an earlier version, which have no
   * order, come first (they were saved before any that have one) and are given one, so that
   * they keep their place whichever of them are rewritten later.
   */
  #inAddOrder(saved: ReadonlyMap<string, SavedRecord>): [string, SavedRecord][] {
    const records = [...saved].sort(byAddOrder);
    const unordered = records.filter(([, record]) => record.order === undefined);
    unordered.forEach(([, record], i) => {
      record.order = i - unordered.length;
    });
    const last = records.at(-1)?.[1].order;
    this.#nextOrder = last === undefined ? 0 : Math.max(last + 1, 0);
    if (unordered.length > 0) this.#put(unordered);
    return records;
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
    this.#dirty.add(id);
  }

  /**
   * Notes the handles of descriptors (File System Access picks) and takes the files a ghost may
   * be waiting for (same name and type); returns the others, to be added as new files. With
   * `deferSizes` the taken files are compared later, in time slices (see the module comment);
   * otherwise now, and those that match no ghost are returned too.
   */
  claim(descriptors: FileDescriptor[], deferSizes: boolean): FileDescriptor[] {
    // No ghost to bring back (the usual case, and the one of a 10,000-file pick): only handles
    // are noted, and the descriptors go on as they came, without a copy.
    if (this.#snapshot.ghosts.length === 0) {
      for (const d of descriptors) if (d.data && d.handle) this.#handles.set(d.data, d.handle);
      return descriptors;
    }
    const ghosts = this.#ghostsByName();
    const rest: FileDescriptor[] = [];
    const candidates: Candidate[] = [];
    for (const d of descriptors) {
      if (d.data && d.handle) this.#handles.set(d.data, d.handle);
      if (d.data instanceof File && ghosts.has(nameOf(d, d.data))) candidates.push({ descriptor: d, data: d.data });
      else rest.push(d);
    }
    if (candidates.length === 0) return rest;
    if (deferSizes) {
      this.#comparisons.push(candidates);
      return rest;
    }
    return [...rest, ...this.#reviveMatching(candidates.map(measure))];
  }

  /** Whether re-added files of a large batch are still being compared with the ghosts. */
  get comparing(): boolean {
    return this.#comparisons.pending > 0;
  }

  /** Resolves once every re-added file has been compared (revived, or added as a new file). */
  compared(): Promise<void> {
    return this.#comparisons.drained();
  }

  /** Asks again for access to the kept handles (call from a click); revives what it can. */
  async reconnect(): Promise<void> {
    for (const id of this.getSnapshot().needPermission) {
      const record = this.#records.get(id);
      if (!record) continue;
      const loaded = await this.#bytes.load(id, record.bytes, identity(record), record.handle, true);
      if ('blob' in loaded) this.#reviveAll([{ id, data: loaded.blob, size: loaded.blob.size }]);
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
    this.#comparisons.stop();
    this.#unsubscribe?.();
    this.#unlisten?.();
    this.#observeNow();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#write();
  }

  /** Revives the ghosts these files match, in one state change; returns the files that match none. */
  #reviveMatching(files: readonly Measured[]): FileDescriptor[] {
    const ghosts = this.#ghostsByName();
    const found: Revival[] = [];
    const taken = new Set<string>();
    const others: FileDescriptor[] = [];
    for (const file of files) {
      const id = this.#ghostFor(file, ghosts.get(nameOf(file.descriptor, file.data)) ?? [], taken);
      if (id === undefined) {
        others.push(file.descriptor);
        continue;
      }
      taken.add(id);
      found.push({ id, data: file.data, size: file.size });
    }
    if (found.length > 0) this.#reviveAll(found);
    return others;
  }

  /**
   * The ghost among `ids` (ghosts of the file's name and type) that `file` is: the one with its
   * size and modification time, else one saved before its size was read.
   */
  #ghostFor(file: Measured, ids: readonly string[], taken: ReadonlySet<string>): string | undefined {
    let unsized: string | undefined;
    for (const id of ids) {
      const record = this.#records.get(id);
      if (!record || taken.has(id) || !samePath(record, file.descriptor)) continue;
      const who = identity(record);
      if (who.size === null) unsized ??= id;
      else if (who.size === file.size && (who.lastModified ?? file.lastModified) === file.lastModified) return id;
    }
    return unsized;
  }

  /** The ghosts by name and type; built per batch (O(ghosts)), so no index to keep in step. */
  #ghostsByName(): Map<string, string[]> {
    const byName = new Map<string, string[]>();
    for (const id of this.#snapshot.ghosts) {
      const record = this.#records.get(id);
      if (!record) continue;
      const key = nameKey(record.file.name, record.file.type);
      const same = byName.get(key);
      if (same) same.push(id);
      else byName.set(key, [id]);
    }
    return byName;
  }

  #reviveAll(found: readonly Revival[]): void {
    this.#dropGhosts(new Set(found.map((f) => f.id)));
    this.#host.revive(found.map((f) => ({ ...f, run: this.#resumeOnRevive.delete(f.id) })));
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

  /** Diffs the store against what was last seen and schedules the writes. */
  #observe(state: FerryState): void {
    if (this.#broken || state.files === this.#seen) return;
    let urgent = false;
    for (const id of state.fileIds) {
      const file = state.files[id];
      const before = this.#seen[id];
      if (!file || file === before || this.#finished.has(id)) continue;
      this.#dirty.add(id);
      // The record is made here, in the store's order, so its add order is the file's.
      if (!before) this.#recordOf(file);
      if (!before || soon(before, file)) urgent = true;
      // A file whose size is pending waits: copying reads its size and modification time, which
      // Chromium looks up on disk synchronously (see sizing.ts); it is copied once sized.
      if (!file.sizePending && (!before || before.sizePending || (before.data !== file.data && file.data)))
        this.#copy(file);
      if (file.state === 'complete' && before?.state !== 'complete') this.#freeBytes(id);
    }
    const gone = new Set<string>();
    for (const id in this.#seen) {
      if (state.files[id]) continue;
      this.#finished.delete(id);
      this.#dirty.delete(id);
      this.#duePuts.delete(id);
      this.#deleted.add(id);
      urgent = true;
      const record = this.#records.get(id);
      this.#records.delete(id);
      if (record) void this.#bytes.drop(id, record.bytes);
      gone.add(id);
    }
    if (this.#snapshot.ghosts.some((g) => gone.has(g))) this.#dropGhosts(gone);
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
      this.#duePuts.delete(id);
      this.#deleted.add(id);
      const record = this.#records.get(id);
      this.#records.delete(id);
      if (record && record.bytes !== 'pending') void this.#bytes.drop(id, record.bytes);
    }
  }

  /** Keeps the bytes of a new (or revived) file: queued, copied in turn (see {@link #copyQueued}). */
  #copy(file: FerryFile): void {
    const data = file.data;
    if (!data || file.state === 'complete') return;
    const record = this.#recordOf(file);
    record.bytes = 'pending';
    record.lastModified = (data as Partial<File>).lastModified ?? null;
    record.handle = this.#handles.get(data);
    this.#toCopy.push({ id: file.id, data, record });
    // A drain is already queued when the queue was not empty.
    if (this.#toCopy.length === 1) this.#copies = this.#copies.then(() => this.#copyQueued());
  }

  /**
   * Copies run in turn: small files many per transaction, others one at a time. Small files
   * have often finished uploading before their turn: a completed file needs no bytes kept, and
   * skipping it spares a write and a delete.
   */
  async #copyQueued(): Promise<void> {
    while (this.#toCopy.length > 0) {
      const batch = this.#nextCopies().filter((job) => this.#stillWanted(job));
      const [first] = batch;
      if (!first) continue;
      const kinds =
        batch.length === 1 && !this.#bytes.isSmall(first.data, first.record.handle)
          ? [await this.#bytes.keep(first.id, first.data, first.record.handle)]
          : await this.#bytes.keepSmall(batch.map((job) => [job.id, job.data]));
      await Promise.all(batch.map((job, i) => this.#kept(job, kinds[i] ?? 'none')));
    }
  }

  /** The next copies from the queue: consecutive small files together, or one other file. */
  #nextCopies(): CopyJob[] {
    let take = 0;
    let bytes = 0;
    for (const job of this.#toCopy) {
      const small = this.#bytes.isSmall(job.data, job.record.handle);
      if (!small) {
        if (take === 0) take = 1;
        break;
      }
      if (take === COPY_BATCH_FILES || (take > 0 && bytes + job.data.size > COPY_BATCH_BYTES)) break;
      bytes += job.data.size;
      take += 1;
    }
    return this.#toCopy.splice(0, take);
  }

  /** Whether a queued copy is still needed: the file is still there and not completed. */
  #stillWanted(job: CopyJob): boolean {
    if (this.#records.get(job.id) !== job.record) return false;
    if (this.#host.getState().files[job.id]?.state !== 'complete') return true;
    job.record.bytes = 'none';
    this.#dirty.add(job.id);
    this.#schedule(0);
    return false;
  }

  /** Records how a copy kept the bytes, or frees them when the file left or completed meanwhile. */
  async #kept(job: CopyJob, kind: BytesKind): Promise<void> {
    if (this.#records.get(job.id) !== job.record) return void this.#bytes.drop(job.id, kind);
    if (this.#host.getState().files[job.id]?.state === 'complete') {
      await this.#bytes.drop(job.id, kind);
      job.record.bytes = 'none';
    } else job.record.bytes = kind;
    this.#dirty.add(job.id);
    this.#schedule(0);
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
        order: this.#nextOrder++,
      };
      this.#records.set(file.id, record);
    }
    return record;
  }

  /**
   * The store changed: compare it with what was written soon, not inside the dispatch that
   * changed it (the comparison walks every file, and the dispatch that adds 10,000 picked files
   * runs in the task the page waits on to show them). Changes made meanwhile are compared
   * together: within {@link OBSERVE_DELAY} (hundreds of small uploads finishing one after
   * another), or, while sizes are being read, on the main thread's next turn (the slicer's):
   * the size reader's slices hold timers back, and one comparison after all of them would copy
   * 10,000 files in one long task.
   */
  #changed(): void {
    if (this.#observeTimer !== undefined || this.#observing) return;
    if (this.#host.getState().sizesPending === 0) {
      this.#observeTimer = setTimeout(() => this.#observeNow(), OBSERVE_DELAY);
      return;
    }
    this.#observing = true;
    void defaultYield().then(() => this.#observeNow());
  }

  /** Compares now what a change left waiting (also before a flush and when stopping). */
  #observeNow(): void {
    if (this.#observeTimer === undefined && !this.#observing) return;
    clearTimeout(this.#observeTimer);
    this.#observeTimer = undefined;
    this.#observing = false;
    this.#observe(this.#host.getState());
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

  /** Writes the dirty records and deletes the removed ones, in transactions after the last one. */
  #write(): void {
    this.#due();
    this.#drainLater();
  }

  /** Moves what changed into what the next transactions write. */
  #due(): void {
    for (const id of this.#dirty) this.#duePuts.add(id);
    for (const id of this.#deleted) {
      this.#duePuts.delete(id);
      this.#dueDeletes.add(id);
    }
    this.#dirty.clear();
    this.#deleted.clear();
  }

  /** Queues records to write as they are (not from the store), before the next writes. */
  #put(records: readonly [string, SavedRecord][]): void {
    this.#dueRecords.push(...records);
    this.#drainLater();
  }

  #drainLater(): void {
    this.#writing = this.#writing.then(() => this.#drain());
  }

  /**
   * Writes what is due in transactions of {@link WRITE_BATCH} records, one after the other:
   * cloning 10,000 records in one go would hold the main thread for one long task.
   */
  async #drain(): Promise<void> {
    for (let batch = this.#take(WRITE_BATCH); batch; batch = this.#take(WRITE_BATCH)) {
      await this.#db.write(FILES, batch.puts, batch.deletes).catch(() => {
        // Quota or a closed database: recovery is best effort, the page goes on.
      });
    }
  }

  /**
   * The page is going away (closed, or hidden and maybe never shown again): what changed is
   * written now, in one transaction begun in this task, so a completion the page has seen
   * reaches the records even when no timer or promise runs again.
   */
  #writeNow(): void {
    if (this.#broken) return;
    this.#observeNow();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#due();
    const batch = this.#take(Number.POSITIVE_INFINITY);
    if (!batch || this.#db.writeNow(FILES, batch.puts, batch.deletes)) return;
    // Not open yet: nothing was written before either; the queued writes do it when it opens.
    this.#dueRecords.push(...batch.records);
    for (const [id] of batch.puts) this.#duePuts.add(id);
    for (const id of batch.deletes) this.#dueDeletes.add(id);
    this.#drainLater();
  }

  /** Up to `limit` due records, read from the store now, with every due delete; none when nothing is due. */
  #take(limit: number) {
    const state = this.#host.getState();
    const records = this.#dueRecords;
    this.#dueRecords = [];
    const puts: [string, unknown][] = [...records];
    for (const id of this.#duePuts) {
      if (puts.length >= limit) break;
      this.#duePuts.delete(id);
      const file = state.files[id];
      if (!file || this.#finished.has(id)) continue;
      const record = this.#recordOf(file);
      // A ghost keeps the state it had before the reload (it is only shown paused).
      record.file = file.ghost ? { ...saved(file), state: record.file.state } : saved(file);
      puts.push([id, record]);
    }
    const deletes = [...this.#dueDeletes];
    this.#dueDeletes.clear();
    if (puts.length === 0 && deletes.length === 0) return undefined;
    return { puts, deletes, records };
  }
}

/**
 * Calls `hidden` when the page may be going away: `pagehide` (closed, reloaded, navigated away)
 * and `visibilitychange` to hidden (a mobile browser may discard a hidden page without another
 * event). Nothing outside a browser.
 */
function onPageHidden(hidden: () => void): () => void {
  const page = globalThis as Partial<Pick<Window, 'addEventListener' | 'removeEventListener' | 'document'>>;
  const onVisibility = () => {
    if (page.document?.visibilityState === 'hidden') hidden();
  };
  page.addEventListener?.('pagehide', hidden);
  page.document?.addEventListener('visibilitychange', onVisibility);
  return () => {
    page.removeEventListener?.('pagehide', hidden);
    page.document?.removeEventListener('visibilitychange', onVisibility);
  };
}

/** Ghosts whose handle needs permission again (kept off the file record, which is plain data). */
const permissionNeeded = new WeakSet<FerryFile>();
const needsPermissionOf = (file: FerryFile) => permissionNeeded.has(file);

/**
 * Add order of two saved records: by `order`; records without one (an earlier version's) first,
 * by id. Ids of one page are `<prefix>-<counter>` with the counter in base 36, so a shorter
 * counter is a smaller one; pages (prefixes) have no order to recover, they only stay together.
 */
function byAddOrder([a, ra]: [string, SavedRecord], [b, rb]: [string, SavedRecord]): number {
  const oa = ra.order ?? Number.NEGATIVE_INFINITY;
  const ob = rb.order ?? Number.NEGATIVE_INFINITY;
  if (oa !== ob) return oa < ob ? -1 : 1;
  return idCounterOrder(a, b);
}

/** Two ids in the order one page made them (see {@link byAddOrder}). */
function idCounterOrder(a: string, b: string): number {
  const cut = (id: string) => {
    const dash = id.lastIndexOf('-');
    return [id.slice(0, dash + 1), id.slice(dash + 1)] as const;
  };
  const [pa, ca] = cut(a);
  const [pb, cb] = cut(b);
  if (pa !== pb) return pa < pb ? -1 : 1;
  if (ca.length !== cb.length) return ca.length - cb.length;
  return ca < cb ? -1 : ca > cb ? 1 : 0;
}

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

function identity(record: SavedRecord) {
  return { name: record.file.name, type: record.file.type, size: record.file.size, lastModified: record.lastModified };
}

/** Name and type, as the engine takes them for a new file (`createFile`): reading them costs nothing. */
function nameOf(d: FileDescriptor, data: File): string {
  return nameKey(d.name || data.name || 'untitled', d.type || data.type || '');
}

const nameKey = (name: string, type: string) => `${name}\u0000${type}`;

/** A ghost that came from a folder wants the same relative path; one picked alone, any. */
const samePath = (record: SavedRecord, d: FileDescriptor) =>
  record.file.relativePath === undefined || record.file.relativePath === d.relativePath;

/** Reads what a candidate is compared on: in Chromium, a disk lookup (see `sizing.ts`). */
function measure(candidate: Candidate): Measured {
  return { ...candidate, size: candidate.data.size, lastModified: candidate.data.lastModified };
}

function saved(file: FerryFile): SavedFile {
  // Nothing reads a pending size after a reload: the record keeps it unknown (null).
  const { data: _data, preview: _preview, ghost: _ghost, sizePending: _pending, ...rest } = file;
  return rest;
}
