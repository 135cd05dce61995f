/**
 * Stall detection: an upload that reports no progress for `timeout` ms is declared stalled
 * (the engine then aborts it and puts the file in error, retryable).
 */

/** The spec's stall timeout. */
export const DEFAULT_STALL_TIMEOUT = 30_000;

export class StallTimer {
  readonly #timeout: number;
  readonly #onStall: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  /** Starts watching at once; `onStall` runs at most once. */
  constructor(timeout: number, onStall: () => void) {
    this.#timeout = timeout;
    this.#onStall = onStall;
    this.#arm();
  }

  /** Progress was made: the countdown starts again. */
  progress(): void {
    if (!this.#stopped) this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#timeout <= 0) return;
    this.#timer = setTimeout(() => {
      if (this.#stopped) return;
      this.stop();
      this.#onStall();
    }, this.#timeout);
  }
}
