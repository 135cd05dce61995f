/**
 * The records recovery keeps, one per file, shared by its parts: the journal writes them, the
 * copy queue notes how the bytes were kept, ghost matching reads who a ghost is, and the
 * coordinator restores them. Each record keeps its file's place in the add order, so the list
 * comes back as the person built it.
 */
import type { FerryFile } from '../types.ts';
import type { BytesKind, FileHandleLike } from './bytes.ts';

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

/** The records by file id, and the add order the next new one takes. */
export class RecordTable {
  readonly #records = new Map<string, SavedRecord>();
  /** The add order the next new record takes: after every restored one. */
  #nextOrder = 0;

  get(id: string): SavedRecord | undefined {
    return this.#records.get(id);
  }

  set(id: string, record: SavedRecord): void {
    this.#records.set(id, record);
  }

  /** Forgets the record of `id`; the one it had. */
  delete(id: string): SavedRecord | undefined {
    const record = this.#records.get(id);
    this.#records.delete(id);
    return record;
  }

  ids(): string[] {
    return [...this.#records.keys()];
  }

  get size(): number {
    return this.#records.size;
  }

  /** The record of `file`, made (last in the add order) when it has none. */
  of(file: FerryFile): SavedRecord {
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
   * The saved records in the order their files were added (IndexedDB gives them in key order,
   * and base-36 ids do not sort as they count), and those of them that were given an order now:
   * records of an earlier version, which have none, come first (they were saved before any that
   * have one) and get one, so that they keep their place whichever of them are rewritten later.
   * New records are ordered after them all.
   */
  inAddOrder(saved: ReadonlyMap<string, SavedRecord>): {
    records: [string, SavedRecord][];
    ordered: [string, SavedRecord][];
  } {
    const records = [...saved].sort(byAddOrder);
    const ordered = records.filter(([, record]) => record.order === undefined);
    ordered.forEach(([, record], i) => {
      record.order = i - ordered.length;
    });
    const last = records.at(-1)?.[1].order;
    this.#nextOrder = last === undefined ? 0 : Math.max(last + 1, 0);
    return { records, ordered };
  }
}

/** A file as its record keeps it. */
export function saved(file: FerryFile): SavedFile {
  // Nothing reads a pending size after a reload: the record keeps it unknown (null). A rate-limit
  // wait belongs to the transfer that was running, not to the file after a reload.
  const { data: _data, preview: _preview, ghost: _ghost, sizePending: _pending, waiting: _waiting, ...rest } = file;
  return rest;
}

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
