/**
 * Throttles uploader progress: the first report goes out at once, later ones are held and
 * flushed together at most every `interval` ms (the spec's 500), as one state change for all
 * files. A progress event therefore costs O(1); the map copy happens once per window.
 */
import type { ProgressUpdate } from './reducer.ts';

export const DEFAULT_PROGRESS_THROTTLE = 500;

export class ProgressBatcher {
  readonly #interval: number;
  readonly #flush: (updates: ProgressUpdate[]) => void;
  readonly #pending = new Map<string, ProgressUpdate>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(flush: (updates: ProgressUpdate[]) => void, interval = DEFAULT_PROGRESS_THROTTLE) {
    this.#flush = flush;
    this.#interval = interval;
  }

  report(id: string, bytesUploaded: number, bytesTotal: number | null): void {
    this.reportMany([{ id, bytesUploaded, bytesTotal }]);
  }

  /** Reports several files at once (a bundle's request spread over its files): one window for all. */
  reportMany(updates: readonly ProgressUpdate[]): void {
    for (const u of updates) this.#pending.set(u.id, u);
    if (this.#timer === undefined) this.#tick();
  }

  /** Drops a file's pending report (it finished, failed or was removed). */
  forget(id: string): void {
    this.#pending.delete(id);
  }

  /** Sends what is pending now. */
  flushNow(): void {
    if (this.#pending.size === 0) return;
    const updates = [...this.#pending.values()];
    this.#pending.clear();
    this.#flush(updates);
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
  }

  #tick = (): void => {
    this.#timer = undefined;
    if (this.#pending.size === 0) return;
    this.flushNow();
    this.#timer = setTimeout(this.#tick, this.#interval);
  };
}
