/**
 * Recovery's journal: it follows the engine's store and writes each file's record (meta,
 * progress, upload URL, S3 multipart and companion tokens) to IndexedDB, soon after a state or
 * bookkeeping change and at most once a throttle window for progress. A completed file's record
 * stays (so it comes back completed, not sent again) until it leaves the engine or every file
 * has completed, when the upload is over and every record is deleted.
 *
 * The records tell the truth after the page goes away at any moment: on `pagehide` (and when the
 * page is hidden) what changed is written at once, in one transaction begun in that task, so a
 * completion the page has seen is never lost to a pending timer; and queued writes read their
 * records from the store when their transaction starts, so a later one never writes an older one.
 *
 * Files added in a large batch have their size pending for a while (`sizing.ts`); one saved then
 * has no size and no modification time in its record (reading either costs a disk lookup in
 * Chromium). A small batch is saved all the same rather than held back until sized: after a
 * reload the list still shows every file that was added, with the meta typed for it, and a ghost
 * says which ones to add again; a file left out would be missed silently. A batch large enough
 * that writes are paced (more than {@link PACED_ABOVE} sizes pending) has its records written
 * once every size is read, each with its size, and its bytes copied then:
 * writing 10,000 records and copies while sizes were read took a tenth of the main thread from
 * the lookups in the seconds that matter. Going away (or a flush) writes everything at once, so
 * a reload in those seconds still brings every file of the batch back (as a ghost: copies begun
 * as the page goes do not land in Chromium); a crash in them loses the batch's records. Other
 * files' changes meanwhile are written paced, as before.
 */
import { changedSince } from '../file-changes.ts';
import { defaultYield } from '../slicer.ts';
import type { FerryFile, FerryState } from '../types.ts';
import type { BytesKind } from './bytes.ts';
import { FILES, type RecoveryDb } from './db.ts';
import { type RecordTable, type SavedRecord, saved } from './table.ts';

/** What the journal needs from recovery. */
export interface JournalHost {
  getState(): FerryState;
  subscribe(listener: (state: FerryState) => void): () => void;
  /** Keeps the bytes of a new file, a newly sized one, or one with new data. */
  copy(file: FerryFile): void;
  /** A file completed: its kept bytes are not needed. */
  free(id: string): void;
  /** Frees the kept bytes of a file whose record is gone. */
  drop(id: string, kind: BytesKind): void;
  /** These files left the engine (the ghosts among them are ghosts no more). */
  left(ids: ReadonlySet<string>): void;
  /** The page may be going away: records that copies under way will change are changed first. */
  hidden(): void;
}

/**
 * Records written per IndexedDB transaction. Each record is cloned on the main thread (about
 * 50 us, several times that on a loaded machine): 500 at once made 100 ms tasks beside a 10,000-
 * file pick, holding frames and the page's timers back; 100 stay a few ms.
 */
const WRITE_BATCH = 100;
/**
 * While sizes are read, transactions start at most this often (ms): the size lookups come
 * first, and records written meanwhile (a batch of 10,000 files added) would take a fifth of
 * the main thread from them; a flush or the page going away writes at once.
 */
const SIZING_PACE = 250;
/**
 * Writes are paced only while more sizes than this are pending (about 0.4 s of lookups in
 * Chromium): a smaller batch is sized before pacing would help, and its writes and copies held
 * back would only land on the uploads that follow (a click right after 500 files are listed).
 */
export const PACED_ABOVE = 1000;

/** Whether a large batch of sizes is being read (recovery's writes then wait their turn). */
const sizingLarge = (state: FerryState) => state.sizesPending > PACED_ABOVE;
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

export class Journal {
  readonly #db: RecoveryDb;
  readonly #records: RecordTable;
  readonly #host: JournalHost;
  readonly #throttle: number;
  /** Files as last written (or being written), by id. */
  #seen: Readonly<Record<string, FerryFile>> = {};
  readonly #dirty = new Set<string>();
  /**
   * Files of a large batch whose sizes are being read: their records are written once every size
   * is read, with its size (or at once for a flush or the page going away).
   */
  readonly #held = new Set<string>();
  readonly #deleted = new Set<string>();
  /** Files of a finished upload (every file complete): nothing left to recover, records deleted. */
  readonly #finished = new Set<string>();
  /**
   * What the next transactions write: ids whose records are due (read from the store when their
   * transaction starts), ids to delete, and records to write as they are.
   */
  readonly #duePuts = new Set<string>();
  readonly #dueDeletes = new Set<string>();
  #dueRecords: [string, SavedRecord][] = [];
  #writing: Promise<void> = Promise.resolve();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #observeTimer: ReturnType<typeof setTimeout> | undefined;
  /** A comparison waits for the main thread's next turn ({@link changed}). */
  #observing = false;
  /** Flushes under way, or 1 for good once stopped: writes are not paced then. */
  #hurry = 0;
  /** The pauses between paced writes under way ({@link pace}). */
  readonly #paces = new Set<() => void>();
  /** Copies waiting for a large batch's sizes ({@link copyPace}). */
  readonly #afterSizing = new Set<() => void>();
  #unsubscribe: (() => void) | undefined;
  #unlisten: (() => void) | undefined;

  constructor(db: RecoveryDb, records: RecordTable, host: JournalHost, throttle: number) {
    this.#db = db;
    this.#records = records;
    this.#host = host;
    this.#throttle = throttle;
  }

  /**
   * Starts following the store, whose `restored` files are as their records say (files already
   * there are new: their records are made and their bytes kept).
   */
  follow(restored: readonly FerryFile[]): void {
    this.#seen = Object.fromEntries(restored.map((f) => [f.id, f]));
    this.#unsubscribe = this.#host.subscribe(() => this.#changed());
    this.#unlisten = onPageHidden(() => this.#writeNow());
    this.#observe(this.#host.getState());
  }

  /**
   * The record of `id` changed outside the store (how its bytes are kept...): written soon, or,
   * while sizes are read, with the records the comparison after the last size writes.
   */
  changed(id: string): void {
    this.#dirty.add(id);
    if (!sizingLarge(this.#host.getState())) this.#schedule(0);
  }

  /** Queues records to write as they are (not from the store), before the next writes. */
  put(records: readonly [string, SavedRecord][]): void {
    this.#dueRecords.push(...records);
    this.#drainLater();
  }

  /** Compares now what a change left waiting (also before a flush and when stopping). */
  observeNow(): void {
    if (this.#observeTimer === undefined && !this.#observing) return;
    clearTimeout(this.#observeTimer);
    this.#observeTimer = undefined;
    this.#observing = false;
    this.#observe(this.#host.getState());
  }

  /** Writes what is waiting for the throttle now, and resolves once every write is done. */
  async flush(): Promise<void> {
    const done = this.hurry();
    try {
      this.observeNow();
      const held = this.#held.size > 0;
      this.#release();
      if (this.#timer !== undefined || held) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#write();
      }
      await this.#writing;
    } finally {
      done();
    }
  }

  /** Paced writes go at once until the returned function is called (a flush waits on them). */
  hurry(): () => void {
    this.#hurry += 1;
    this.#unpace();
    let once = false;
    return () => {
      if (once) return;
      once = true;
      this.#hurry -= 1;
    };
  }

  stop(): void {
    this.#hurry += 1;
    this.#unpace();
    this.#unsubscribe?.();
    this.#unlisten?.();
    this.observeNow();
    this.#release();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#write();
  }

  /**
   * Diffs the store against what was last seen and schedules the writes: only the files changed
   * since then when the store says which (`file-changes.ts`: size commits, progress...), every
   * file otherwise (added files are made records in the store's order).
   */
  #observe(state: FerryState): void {
    if (state.files === this.#seen) return;
    const changed = changedSince(state.files, this.#seen);
    let urgent = false;
    const gone = new Set<string>();
    const sizing = sizingLarge(state);
    for (const id of changed ?? state.fileIds) {
      const file = state.files[id];
      if (!file) {
        if (changed && this.#seen[id]) gone.add(id);
        continue;
      }
      if (this.#compare(id, file, sizing)) urgent = true;
    }
    if (this.#held.size > 0 && state.sizesPending === 0) {
      this.#release();
      urgent = true;
    }
    if (!changed) for (const id in this.#seen) if (!state.files[id]) gone.add(id);
    for (const id of gone) {
      this.#finished.delete(id);
      this.#held.delete(id);
      this.#dirty.delete(id);
      this.#duePuts.delete(id);
      this.#deleted.add(id);
      urgent = true;
      const record = this.#records.delete(id);
      if (record) this.#host.drop(id, record.bytes);
    }
    if (gone.size > 0) this.#host.left(gone);
    this.#seen = state.files;
    if (this.#records.size > 0 && state.fileIds.every((id) => state.files[id]?.state === 'complete')) {
      this.#forgetFinished(state.fileIds);
      urgent = true;
    }
    // While a large batch's sizes are read, what is not urgent waits until (nearly) all are.
    if (urgent || !sizingLarge(state)) this.#schedule(urgent ? 0 : this.#throttle);
  }

  /**
   * Compares one file of the store with how it was last seen; whether its record is due soon.
   * `sizing`: a large batch's sizes are being read (a file of it added now is held).
   */
  #compare(id: string, file: FerryFile, sizing: boolean): boolean {
    const before = this.#seen[id];
    if (file === before || this.#finished.has(id)) return false;
    const hold = this.#held.has(id) || (sizing && !before && file.sizePending === true);
    if (hold) this.#held.add(id);
    else this.#dirty.add(id);
    // The record is made here, in the store's order, so its add order is the file's.
    if (!before) this.#records.of(file);
    // A file whose size is pending waits: copying reads its size and modification time, which
    // Chromium looks up on disk synchronously (see sizing.ts); it is copied once sized.
    if (!file.sizePending && (!before || before.sizePending || (before.data !== file.data && file.data)))
      this.#host.copy(file);
    if (file.state === 'complete' && before?.state !== 'complete') this.#host.free(id);
    return !hold && (!before || soon(before, file));
  }

  /** The held records of a large batch are due with the others. */
  #release(): void {
    for (const id of this.#held) this.#dirty.add(id);
    this.#held.clear();
  }

  /** Every file has completed: the upload is over, so its records and bytes go. */
  #forgetFinished(ids: readonly string[]): void {
    for (const id of ids) {
      this.#finished.add(id);
      this.#held.delete(id);
      this.#dirty.delete(id);
      this.#duePuts.delete(id);
      this.#deleted.add(id);
      const record = this.#records.delete(id);
      if (record && record.bytes !== 'pending') this.#host.drop(id, record.bytes);
    }
  }

  /**
   * The store changed: compare it with what was written soon, not inside the dispatch that
   * changed it (the comparison walks every file, and the dispatch that adds 10,000 picked files
   * runs in the task the page waits on to show them). Changes made meanwhile are compared
   * together: within {@link OBSERVE_DELAY} (hundreds of small uploads finishing one after
   * another), or, while sizes are being read, on the main thread's next turn (the slicer's), so
   * that files are compared (and their copies queued) as their sizes arrive rather than all
   * 10,000 in one long task at the end.
   */
  #changed(): void {
    if (this.#afterSizing.size > 0 && !this.#holding(this.#host.getState())) this.#copiesGo();
    if (this.#observeTimer !== undefined || this.#observing) return;
    if (this.#host.getState().sizesPending === 0) {
      this.#observeTimer = setTimeout(() => this.observeNow(), OBSERVE_DELAY);
      return;
    }
    this.#observing = true;
    void defaultYield().then(() => this.observeNow());
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
      await this.pace();
    }
  }

  /**
   * Resolves when the next write may start (the journal's, or a copy of bytes): at once, or while
   * sizes are read, after {@link SIZING_PACE} (sooner if a flush asks for the writes meanwhile).
   */
  pace(): Promise<void> {
    if (this.#hurry > 0 || !sizingLarge(this.#host.getState())) return Promise.resolve();
    return new Promise((ok) => {
      const done = () => {
        clearTimeout(timer);
        this.#paces.delete(done);
        ok();
      };
      const timer = setTimeout(done, SIZING_PACE);
      this.#paces.add(done);
    });
  }

  /**
   * Resolves when the next copy of bytes may start: at once, or while a large batch's sizes are
   * read, once all are read (or a flush asks for the copies, or the page stops). A copy
   * lands only from a page that stays (Chromium drops a transaction with blobs that the page leaves
   * before they are written), so copies during the sizing spared a reload then only the files of
   * the few batches that had their turn, and took a tenth of the main thread from the lookups.
   */
  copyPace(): Promise<void> {
    if (this.#hurry > 0 || !this.#holding(this.#host.getState())) return Promise.resolve();
    return new Promise((ok) => this.#afterSizing.add(ok));
  }

  /**
   * Whether a large batch's sizes are being read: from more than {@link PACED_ABOVE} pending
   * until the last (a burst of 10,000 writes and copies beside the last 1,000 lookups would
   * make those wait).
   */
  #holding(state: FerryState): boolean {
    return state.sizesPending > 0 && (this.#held.size > 0 || sizingLarge(state));
  }

  /** Ends every pause between paced writes, and every copy waiting for the sizing to end. */
  #unpace(): void {
    for (const done of [...this.#paces]) done();
    this.#copiesGo();
  }

  #copiesGo(): void {
    const waiting = [...this.#afterSizing];
    this.#afterSizing.clear();
    for (const ok of waiting) ok();
  }

  /**
   * The page is going away (closed, or hidden and maybe never shown again): what changed is
   * written now, in one transaction begun in this task, so a completion the page has seen
   * reaches the records even when no timer or promise runs again.
   */
  #writeNow(): void {
    this.observeNow();
    this.#host.hidden();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#release();
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
      const record = this.#records.of(file);
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
