/**
 * Ghosts: files restored without their bytes, shown paused until the same file is added again.
 * {@link Ghosts.claim} takes the re-added files a ghost may be waiting for (same name and type)
 * and revives the ghost each one is: same size and modification time, or, for a ghost saved
 * while its size was pending (`journal.ts`), the same name, type and relative path (when it had
 * one). Such a file never started uploading (`upload()` waits for sizes), so there is no server
 * offset to protect; an exact match wins over a name-only one.
 *
 * Comparing reads the re-added file's size, so it follows the batch: a small batch is compared
 * while adding; in a large one (sizes deferred) the files a ghost may be waiting for are held
 * back and compared in time slices, as `sizing.ts` reads sizes. Meanwhile the ghosts stay ghosts
 * (nothing uploads on a guess); a file that turns out to be none of theirs is then added as a
 * new file.
 */
import type { Revival } from '../reducer.ts';
import { DEFAULT_COMMIT_MS } from '../sizing.ts';
import { SlicedQueue, type SliceOptions } from '../slicer.ts';
import type { FileDescriptor } from '../types.ts';
import type { FileHandleLike, Identity } from './bytes.ts';
import type { RecordTable, SavedRecord } from './table.ts';

/** A ghost's bytes found again (by a re-added file, or through its handle). */
export interface Revived extends Revival {
  /** Whether it resumes at once (it was moving or waiting when the page went away). */
  run: boolean;
}

/** What ghost matching needs from recovery. */
export interface GhostsHost {
  /** The ids of the ghosts waiting now. */
  ghosts(): readonly string[];
  /** These ghosts are ghosts no more (revived, or gone). */
  drop(ids: ReadonlySet<string>): void;
  /** Gives ghosts their bytes back, in one state change. */
  revive(revived: Revived[]): void;
  /** Adds files that turned out to be no ghost's, as new files. */
  add(descriptors: FileDescriptor[]): void;
  /** How the engine slices size reads (`sizing.ts`); re-added files are compared in the same way. */
  readonly slicing?: SliceOptions;
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

export class Ghosts {
  readonly #records: RecordTable;
  readonly #host: GhostsHost;
  /** The File System Access handles files were picked through (their bytes need no copy). */
  readonly #handles = new WeakMap<Blob, FileHandleLike>();
  /** Ghosts that were moving or waiting when the page went away: re-adding them resumes the upload. */
  readonly #resumeOnRevive = new Set<string>();
  /** Candidates of a large batch, measured and compared in time slices. */
  readonly #comparisons: SlicedQueue<Candidate, Measured>;

  constructor(records: RecordTable, host: GhostsHost) {
    this.#records = records;
    this.#host = host;
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

  /** The handle `data` was picked through, if any. */
  handleOf(data: Blob): FileHandleLike | undefined {
    return this.#handles.get(data);
  }

  /** The ghost `id` resumes its upload when revived. */
  resumeOnRevive(id: string): void {
    this.#resumeOnRevive.add(id);
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
    if (this.#host.ghosts().length === 0) {
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

  /** Gives these ghosts their bytes back; those that were moving resume. */
  reviveAll(found: readonly Revival[]): void {
    this.#host.drop(new Set(found.map((f) => f.id)));
    this.#host.revive(found.map((f) => ({ ...f, run: this.#resumeOnRevive.delete(f.id) })));
  }

  stop(): void {
    this.#comparisons.stop();
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
    if (found.length > 0) this.reviveAll(found);
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
    for (const id of this.#host.ghosts()) {
      const record = this.#records.get(id);
      if (!record) continue;
      const key = nameKey(record.file.name, record.file.type);
      const same = byName.get(key);
      if (same) same.push(id);
      else byName.set(key, [id]);
    }
    return byName;
  }
}

/** Who a record's file is: what kept bytes and re-added files are checked against. */
export function identity(record: SavedRecord): Identity {
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
