/**
 * Pending sizes of a large batch of local files, read after the files are in the store.
 *
 * Why: Chromium looks a picked (or dropped) file's size up on disk, synchronously, the first
 * time `size` or `lastModified` is read (about 0.35 ms a file: 3.5 s for 10,000). Read while
 * adding, that freezes the page before the files appear. So a large batch is added with sizes
 * pending (`sizePending`), and the sizes are read here in time slices (`slicer.ts`): one state
 * change per {@link DEFAULT_COMMIT_MS} of slices, size restrictions and duplicate checks applied as sizes arrive (refused
 * files leave then, with the same `restriction-failed` as when adding), one toast once the
 * queue is empty. `upload()` waits for {@link SizeReader.drained}.
 */
import { admitSize } from './admission.ts';
import type { FileIndex } from './files.ts';
import type { LocaleVars } from './locale.ts';
import type { SizeUpdate } from './reducer.ts';
import type { Rejection } from './restrictions.ts';
import { SlicedQueue, type SliceOptions } from './slicer.ts';
import type { FerryFile, FileDescriptor, Restrictions } from './types.ts';

export interface SizingOptions extends SliceOptions {
  /**
   * Batches of up to this many files with bytes have their sizes read while adding, as
   * before (default 100: about 35 ms of lookups in Chromium); larger ones get them pending.
   */
  eagerUpTo?: number;
}

export const DEFAULT_EAGER_UP_TO = 100;
/**
 * Each commit copies the file map and re-renders what reads it, and recovery compares the store
 * after it (each O(files)): with 10,000 files, committing after every 8 ms slice spent more time
 * there than reading sizes, and every 100 ms still a fifth as much.
 */
export const DEFAULT_COMMIT_MS = 250;

/** A file a size check refused, with what `restriction-failed` reports. */
export interface LateRejection {
  id: string;
  descriptor: FileDescriptor;
  rejection: Rejection;
}

/** What the reader needs from the engine. */
export interface SizingHost {
  getFile(id: string): FerryFile | undefined;
  readonly restrictions: Restrictions;
  readonly index: FileIndex;
  i18n(key: string, vars?: LocaleVars): string;
  /** One slice: the sizes read and the files refused (one state change). */
  commit(sizes: SizeUpdate[], rejected: LateRejection[]): void;
  /** The queue ran empty; every refusal since it last did, for one toast. */
  finished(rejections: Rejection[]): void;
}

/** A queued file: its id and the descriptor it came from (what a late refusal reports). */
interface Queued {
  id: string;
  descriptor: FileDescriptor;
}

type Read = ({ size: number } | { rejection: Rejection }) & Queued;

export class SizeReader {
  readonly #host: SizingHost;
  readonly #queue: SlicedQueue<Queued, Read>;
  #refused: Rejection[] = [];

  constructor(host: SizingHost, options: SliceOptions = {}) {
    this.#host = host;
    this.#queue = new SlicedQueue<Queued, Read>(
      {
        read: (queued) => this.#read(queued),
        commit: (results) => this.#commit(results),
        idle: () => {
          const refused = this.#refused;
          this.#refused = [];
          this.#host.finished(refused);
        },
      },
      { commitMs: DEFAULT_COMMIT_MS, ...options },
    );
  }

  /** Whether sizes are still being read (a new batch then queues behind, to keep check order). */
  get busy(): boolean {
    return this.#queue.busy;
  }

  /**
   * Queues the files that came in with `sizePending`, with the descriptors they came from
   * (`sources[i]` is the descriptor of `files[i]`). One small record per file, not a map by
   * id: this runs in the task that adds the files.
   */
  read(files: readonly FerryFile[], sources: readonly FileDescriptor[]): void {
    const queued: Queued[] = [];
    for (let i = 0; i < files.length; i += 1) {
      const f = files[i] as FerryFile;
      if (f.sizePending) queued.push({ id: f.id, descriptor: sources[i] ?? {} });
    }
    this.#queue.push(queued);
  }

  /** Resolves once every queued size has been read and committed. */
  drained(): Promise<void> {
    return this.#queue.drained();
  }

  stop(): void {
    this.#queue.stop();
  }

  #read(queued: Queued): Read | null {
    const file = this.#host.getFile(queued.id);
    // Removed (or given new bytes) while waiting: nothing to read.
    if (!file?.sizePending) return null;
    return { ...queued, ...admitSize(file, this.#host) };
  }

  #commit(results: Read[]): void {
    const sizes: SizeUpdate[] = [];
    const rejected: LateRejection[] = [];
    for (const r of results) {
      if ('size' in r) sizes.push({ id: r.id, size: r.size });
      else {
        rejected.push({ id: r.id, descriptor: r.descriptor, rejection: r.rejection });
        this.#refused.push(r.rejection);
      }
    }
    this.#host.commit(sizes, rejected);
  }
}
