/**
 * A queue worked through in time slices: items are read one by one until the slice's budget is
 * spent, the slice's results are committed at once, then the main thread gets a turn before the
 * next slice. Framework-free; the engine reads picked files' sizes through it (`sizing.ts`).
 */

/** What the queue does with its items. */
export interface SliceHost<T, R> {
  /** Reads one item (the costly part); null when there is nothing to commit for it. */
  read(item: T): R | null;
  /** Takes the results read since the last commit, in order (never called with none). */
  commit(results: R[]): void;
  /** The queue ran empty. */
  idle?(): void;
}

export interface SliceOptions {
  /** Work per slice before yielding, in ms (default 8: half a 60 Hz frame). */
  sliceMs?: number;
  /**
   * Results are committed at most this often, in ms (default 0: after every slice). A commit
   * that costs in proportion to everything already there (a state change re-rendering the
   * list) is worth spreading over several slices.
   */
  commitMs?: number;
  /** The clock slices are measured on (tests give one that moves as items cost time). */
  now?: () => number;
  /** Gives the main thread a turn (default {@link defaultYield}: a MessageChannel task, or a timeout). */
  yieldToMain?: () => Promise<void>;
}

/**
 * Gives the main thread a turn: a task posted through a MessageChannel, which the browser runs
 * after the rendering and the page's own timers that came due meanwhile (the same priority,
 * queued earlier). Not `scheduler.yield()`: its continuations run ahead of other queued work, so a
 * loop of them held rendering back until the browser's starvation guard stepped in (about 9
 * frames a second while 10,000 picked files' sizes were read) and kept the page's
 * `setTimeout(0)` waiting. Not a `setTimeout` chain either: browsers clamp those to 4 ms.
 * One channel serves every turn: making and closing a channel per turn cost about 0.3 ms in
 * Chromium, a fortieth of the main thread beside 8 ms slices.
 */
export function defaultYield(): Promise<void> {
  if (typeof MessageChannel !== 'function') return new Promise((ok) => setTimeout(ok, 0));
  return new Promise((ok) => turns().post(ok));
}

/** The shared channel of {@link defaultYield}: one message per turn, answered in order. */
interface Turns {
  made: typeof MessageChannel;
  post(ok: () => void): void;
}

let shared: Turns | undefined;

function turns(): Turns {
  // Made again if the page's MessageChannel changed (tests stub it).
  if (shared?.made === MessageChannel) return shared;
  const channel = new MessageChannel();
  const waiting: (() => void)[] = [];
  // Node keeps a process alive while a port listens: only while a turn is awaited.
  const port = channel.port1 as MessagePort & { ref?(): void; unref?(): void };
  port.onmessage = () => {
    waiting.shift()?.();
    if (waiting.length === 0) port.unref?.();
  };
  port.unref?.();
  shared = {
    made: MessageChannel,
    post(ok) {
      if (waiting.length === 0) port.ref?.();
      waiting.push(ok);
      channel.port2.postMessage(null);
    },
  };
  return shared;
}

/**
 * How many items the next batch of a job whose cost grows with its items (records cloned into one
 * IndexedDB transaction) may take to last about `budgetMs`, given that the last batch took
 * `tookMs` for `n`: in proportion, between `min` and `max`. Timed on the wall clock, so where the
 * main thread waits for a core (a loaded machine) batches shrink too, and tasks stay short.
 */
export function fittedBatch(n: number, tookMs: number, budgetMs: number, max: number, min = 10): number {
  // Under a quarter of the budget is too short to time (a page's clock may step by 0.1 ms): a
  // small batch (all there was to write) says nothing about a full one.
  if (n === 0 || tookMs <= budgetMs / 4) return max;
  return Math.max(Math.min(min, max), Math.min(max, Math.floor((n * budgetMs) / tookMs)));
}

export class SlicedQueue<T, R> {
  readonly #host: SliceHost<T, R>;
  readonly #sliceMs: number;
  readonly #commitMs: number;
  #results: R[] = [];
  #committedAt = Number.NEGATIVE_INFINITY;
  /** How long the last commit took: a slice that ends in a commit leaves it that much room. */
  #commitCost = 0;
  readonly #now: () => number;
  readonly #yield: () => Promise<void>;
  #items: T[] = [];
  #next = 0;
  #running = false;
  #stopped = false;
  #waiters: (() => void)[] = [];

  constructor(host: SliceHost<T, R>, options: SliceOptions = {}) {
    this.#host = host;
    this.#sliceMs = options.sliceMs ?? 8;
    this.#commitMs = options.commitMs ?? 0;
    this.#now = options.now ?? (() => performance.now());
    this.#yield = options.yieldToMain ?? defaultYield;
  }

  /** Items not read yet. */
  get pending(): number {
    return this.#items.length - this.#next;
  }

  /** Whether items are queued or read but not committed yet (false once idle). */
  get busy(): boolean {
    return this.#running && !this.#stopped;
  }

  /** Queues items; the first slice runs after the main thread's next turn (never inside this call). */
  push(items: readonly T[]): void {
    if (this.#stopped || items.length === 0) return;
    // One copy by the engine's own array builtins (10,000 items come in the task of a pick),
    // dropping what was read already.
    this.#items = this.#next === this.#items.length ? items.slice() : this.#items.slice(this.#next).concat(items);
    this.#next = 0;
    if (!this.#running) void this.#run();
  }

  /** Resolves once every queued item has been read and committed. */
  drained(): Promise<void> {
    if (this.#stopped || (this.pending === 0 && !this.#running)) return Promise.resolve();
    return new Promise((ok) => this.#waiters.push(ok));
  }

  /** Drops what is queued and stops for good; waiters are released. */
  stop(): void {
    this.#stopped = true;
    this.#items = [];
    this.#results = [];
    this.#next = 0;
    this.#release();
  }

  async #run(): Promise<void> {
    this.#running = true;
    while (this.pending > 0 && !this.#stopped) {
      await this.#yield();
      if (this.#stopped) break;
      this.#slice();
    }
    this.#running = false;
    this.#items = [];
    this.#next = 0;
    if (!this.#stopped) this.#host.idle?.();
    this.#release();
  }

  #slice(): void {
    const results = this.#results;
    const start = this.#now();
    // A slice that will end in a commit reads for less, so that reads and commit together stay
    // within the slice: a commit can cost in proportion to everything already there (10,000
    // files: several ms at each size commit), and on top of a full slice of reads it made the
    // page's longest tasks. A commit costing under a quarter of a slice is left no room.
    const room = this.#commitCost > this.#sliceMs / 4 ? this.#sliceMs - this.#commitCost : this.#sliceMs;
    const budget = (now: number) => (now - this.#committedAt < this.#commitMs ? this.#sliceMs : room);
    // At least one item per slice, so a single slow item cannot stall the queue.
    do {
      const item = this.#items[this.#next] as T;
      this.#next += 1;
      const result = this.#host.read(item);
      if (result !== null) results.push(result);
    } while (this.pending > 0 && this.#within(start, budget));
    const now = this.#now();
    if (results.length === 0 || (this.pending > 0 && now - this.#committedAt < this.#commitMs)) return;
    this.#results = [];
    this.#committedAt = now;
    this.#host.commit(results);
    this.#commitCost = this.#now() - now;
  }

  /** Whether a slice begun at `start` may read another item, given its budget at each moment. */
  #within(start: number, budget: (now: number) => number): boolean {
    const now = this.#now();
    return now - start < budget(now);
  }

  #release(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const ok of waiters) ok();
  }
}
