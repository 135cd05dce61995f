/**
 * The few IndexedDB calls recovery needs, as promises: one database per engine id (so two
 * widgets on a page never see each other's files) with a `files` store (records) and a `blobs`
 * store (copies of bytes where the Origin Private File System is missing).
 */

const VERSION = 1;
export const FILES = 'files';
export const BLOBS = 'blobs';

/** The database name of an engine id. */
export const dbName = (scope: string) => `ferry-recovery:${scope}`;

function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((ok, fail) => {
    request.onsuccess = () => ok(request.result);
    request.onerror = () => fail(request.error);
  });
}

function committed(tx: IDBTransaction): Promise<void> {
  return new Promise((ok, fail) => {
    tx.oncomplete = () => ok();
    tx.onerror = () => fail(tx.error);
    tx.onabort = () => fail(tx.error ?? new DOMException('transaction aborted', 'AbortError'));
  });
}

/** A small key-value view over the two stores of one scope. */
export class RecoveryDb {
  readonly #db: Promise<IDBDatabase>;
  /** The database once open: a page going away writes without awaiting anything. */
  #open: IDBDatabase | undefined;

  constructor(scope: string, factory: IDBFactory = indexedDB) {
    const open = factory.open(dbName(scope), VERSION);
    open.onupgradeneeded = () => {
      for (const name of [FILES, BLOBS])
        if (!open.result.objectStoreNames.contains(name)) open.result.createObjectStore(name);
    };
    this.#db = done(open).then((db) => {
      this.#open = db;
      return db;
    });
  }

  async all<T>(store: string): Promise<Map<string, T>> {
    const db = await this.#db;
    const tx = db.transaction(store, 'readonly');
    const [keys, values] = await Promise.all([
      done(tx.objectStore(store).getAllKeys()),
      done(tx.objectStore(store).getAll() as IDBRequest<T[]>),
    ]);
    return new Map(keys.map((k, i) => [String(k), values[i] as T]));
  }

  async get<T>(store: string, key: string): Promise<T | undefined> {
    const db = await this.#db;
    return done(db.transaction(store, 'readonly').objectStore(store).get(key) as IDBRequest<T | undefined>);
  }

  /**
   * The values of `keys` (undefined where missing), in one transaction: a restore reads hundreds
   * of copies, and a transaction each would queue them one behind the other.
   */
  async getMany<T>(store: string, keys: readonly string[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    const db = await this.#db;
    const os = db.transaction(store, 'readonly').objectStore(store);
    return Promise.all(keys.map((key) => done(os.get(key) as IDBRequest<T | undefined>)));
  }

  /**
   * Writes and deletes in one transaction; once the database is open, begun (and the values
   * cloned) within this call, so that a caller can time what the writes cost the main thread.
   */
  async write(store: string, puts: readonly [string, unknown][], deletes: readonly string[] = []): Promise<void> {
    if (puts.length === 0 && deletes.length === 0) return;
    await committed(this.#transact(this.#open ?? (await this.#db), store, puts, deletes));
  }

  /**
   * Writes and deletes in one transaction started now, for a page that is going away and cannot
   * await; false when the database is not open yet. It queues behind the transactions begun
   * before it, as any other.
   */
  writeNow(store: string, puts: readonly [string, unknown][], deletes: readonly string[] = []): boolean {
    if (!this.#open) return false;
    if (puts.length === 0 && deletes.length === 0) return true;
    try {
      this.#transact(this.#open, store, puts, deletes);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Issues the requests and commits at once: left to auto-commit, a transaction ends only after
   * the page has heard every request's answer, and a page closed meanwhile loses it.
   */
  #transact(
    db: IDBDatabase,
    store: string,
    puts: readonly [string, unknown][],
    deletes: readonly string[],
  ): IDBTransaction {
    const tx = db.transaction(store, 'readwrite');
    const os = tx.objectStore(store);
    for (const [key, value] of puts) os.put(value, key);
    for (const key of deletes) os.delete(key);
    (tx as Partial<Pick<IDBTransaction, 'commit'>>).commit?.();
    return tx;
  }

  async count(store: string): Promise<number> {
    const db = await this.#db;
    return done(db.transaction(store, 'readonly').objectStore(store).count());
  }

  async close(): Promise<void> {
    (await this.#db).close();
  }
}
