/**
 * Concurrency limiter shared by every uploader of an engine: at most `limit` uploads run at once
 * (0 = unlimited, the spec's default). Waiters are served first come, first served.
 */

export type Release = () => void;

export class Limiter {
  #limit: number;
  #active = 0;
  readonly #queue: { grant: (release: Release) => void; signal?: AbortSignal; onAbort: () => void }[] = [];

  constructor(limit = 0) {
    this.#limit = limit;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /** Resolves with a release function once a slot is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#limit <= 0 || this.#active < this.#limit) return Promise.resolve(this.#take());
    return new Promise((resolve, reject) => {
      const entry = {
        grant: resolve,
        signal,
        onAbort: () => {
          const at = this.#queue.indexOf(entry);
          if (at >= 0) this.#queue.splice(at, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.#queue.push(entry);
    });
  }

  #take(): Release {
    this.#active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active -= 1;
      this.#next();
    };
  }

  #next(): void {
    while (this.#queue.length > 0 && (this.#limit <= 0 || this.#active < this.#limit)) {
      const entry = this.#queue.shift();
      if (!entry) return;
      entry.signal?.removeEventListener('abort', entry.onAbort);
      entry.grant(this.#take());
    }
  }
}
