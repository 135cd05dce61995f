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
import { defaultYield, fittedBatch, type SliceOptions } from '../slicer.ts';
import type { FerryFile, FerryState } from '../types.ts';
import type { BytesKind } from './bytes.ts';
import { FILES, type RecoveryDb } from './db.ts';
import { onPageHidden } from './page-hidden.ts';
import { type RecordTable, type SavedRecord, saved } from './table.ts';
import { OBSERVE_DELAY, PACED_ABOVE, SIZING_PACE, sizingLarge, soon, WRITE_BATCH } from './write-rules.ts';

export { PACED_ABOVE } from './write-rules.ts';

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
 * A comparison of the store with what was last seen, spread over turns: files are compared for at
 * most a slice each turn ({@link Journal.observeNow} finishes it at once).
 */
interface Walk {
  /** The store compared: the one the walk began with (later changes are compared after it). */
  state: FerryState;
  ids: readonly string[];
  /** Whether `ids` are the files the store listed as changed (else every file, in order). */
  listed: boolean;
  next: number;
  urgent: boolean;
  gone: Set<string>;
}

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
  /** A comparison under way across turns. */
  #walk: Walk | undefined;
  readonly #now: () => number;
  readonly #sliceMs: number;
  /** Records the next transaction takes ({@link #drain}). */
  #writeBatch = WRITE_BATCH;

  /** `slicing`: the engine's slices (`sizing.ts`); a comparison takes at most one a turn. */
  constructor(db: RecoveryDb, records: RecordTable, host: JournalHost, throttle: number, slicing: SliceOptions = {}) {
    this.#db = db;
    this.#records = records;
    this.#host = host;
    this.#throttle = throttle;
    this.#now = slicing.now ?? (() => performance.now());
    this.#sliceMs = slicing.sliceMs ?? 8;
  }

  /**
   * Starts following the store, whose `restored` files are as their records say (files already
   * there are new: their records are made and their bytes kept).
   */
  follow(restored: readonly FerryFile[]): void {
    this.#seen = Object.fromEntries(restored.map((f) => [f.id, f]));
    this.#unsubscribe = this.#host.subscribe(() => this.#changed());
    this.#unlisten = onPageHidden(() => this.#writeNow());
    this.#observe(this.#host.getState(), Number.POSITIVE_INFINITY);
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

  /** Compares now what a change left waiting (also before a flush and when stopping), all of it. */
  observeNow(): void {
    if (this.#observeTimer === undefined && !this.#observing && !this.#walk) return;
    clearTimeout(this.#observeTimer);
    this.#observeTimer = undefined;
    this.#observing = false;
    this.#observe(this.#host.getState(), Number.POSITIVE_INFINITY);
  }

  /** A turn of comparing: at most a slice of it; the rest in the next turn. */
  #observeTurn(): void {
    if (!this.#observing) return;
    this.#observing = false;
    this.#observe(this.#host.getState(), this.#sliceMs);
  }

  /** Goes on comparing in the main thread's next turn. */
  #observeLater(): void {
    if (this.#observing) return;
    this.#observing = true;
    void defaultYield().then(() => this.#observeTurn());
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
   * file otherwise (added files are made records in the store's order). Files are compared for at
   * most `budget` ms, the rest in later turns: the walk of a 10,000-file pick just added (a record
   * made for each) took 12 ms of one task on an idle machine, and over 50 ms on a loaded one.
   */
  #observe(latest: FerryState, budget: number): void {
    const start = this.#now();
    let state = latest;
    for (;;) {
      if (!this.#walk) {
        if (state.files === this.#seen) return;
        const changed = changedSince(state.files, this.#seen);
        this.#walk = {
          state,
          ids: changed ?? state.fileIds,
          listed: changed !== undefined,
          next: 0,
          urgent: false,
          gone: new Set(),
        };
      }
      const walk = this.#walk;
      const sizing = sizingLarge(walk.state);
      while (walk.next < walk.ids.length) {
        const id = walk.ids[walk.next] as string;
        walk.next += 1;
        const file = walk.state.files[id];
        if (!file) {
          if (walk.listed && this.#seen[id]) walk.gone.add(id);
        } else if (this.#compare(id, file, sizing)) walk.urgent = true;
        if (walk.next < walk.ids.length && this.#now() - start >= budget) {
          this.#observeLater();
          return;
        }
      }
      this.#walk = undefined;
      this.#observed(walk);
      // The store may have moved on while the walk was spread over turns: compared after it.
      state = this.#host.getState();
    }
  }

  /** A walk is over: what left is forgotten, the store it compared is the one seen, writes are due. */
  #observed(walk: Walk): void {
    const { state, gone } = walk;
    let urgent = walk.urgent;
    if (this.#held.size > 0 && state.sizesPending === 0) {
      this.#release();
      urgent = true;
    }
    if (!walk.listed) for (const id in this.#seen) if (!state.files[id]) gone.add(id);
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
      this.#observing = true;
      this.#observeTimer = setTimeout(() => {
        this.#observeTimer = undefined;
        this.#observeTurn();
      }, OBSERVE_DELAY);
      return;
    }
    this.#observeLater();
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
   * Writes what is due in transactions one after the other, each of at most {@link WRITE_BATCH}
   * records and as many as were cloned in half a slice the last time: cloning 10,000 records in
   * one go would hold the main thread for one long task, and 100 took 4-5 ms of a task (40 ms on
   * a loaded machine) when a large batch's records went after its last size.
   */
  async #drain(): Promise<void> {
    for (;;) {
      const started = this.#now();
      const batch = this.#take(this.#writeBatch);
      if (!batch) return;
      const written = this.#db.write(FILES, batch.puts, batch.deletes);
      this.#writeBatch = fittedBatch(batch.puts.length, this.#now() - started, this.#sliceMs / 2, WRITE_BATCH);
      await written.catch(() => {
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
