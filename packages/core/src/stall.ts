/**
 * Stall detection: an upload that reports no progress for `timeout` ms is declared stalled
 * (the engine then aborts it and puts the file in error, retryable). Progress only notes the
 * time: the one timer, when it fires, waits again for what is left since the last progress.
 * Progress events come many times a second per upload, and re-arming a timer on each costs
 * more than the rest of their handling.
 */

/** The spec's stall timeout. */
export const DEFAULT_STALL_TIMEOUT = 30_000;

export class StallTimer {
  readonly #timeout: number;
  readonly #onStall: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #lastProgress = Date.now();

  /** Starts watching at once; `onStall` runs at most once. */
  constructor(timeout: number, onStall: () => void) {
    this.#timeout = timeout;
    this.#onStall = onStall;
    if (timeout > 0) this.#wait(timeout);
  }

  /** Progress was made: the countdown starts again. */
  progress(): void {
    this.#lastProgress = Date.now();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #wait(ms: number): void {
    this.#timer = setTimeout(() => {
      if (this.#stopped) return;
      const left = this.#lastProgress + this.#timeout - Date.now();
      if (left > 0) return this.#wait(left);
      this.stop();
      this.#onStall();
    }, ms);
  }
}
