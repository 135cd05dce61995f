/**
 * The informer queue: short messages (message, type, duration) the UI shows as toasts. An
 * identical message already showing is refreshed instead of queued again, so a burst of the same
 * failure shows one toast.
 */
import type { InfoMessage, InfoType } from './types.ts';

export interface InformerHost {
  show(info: InfoMessage): void;
  hide(info: InfoMessage): void;
  current(): readonly InfoMessage[];
}

let counter = 0;

export class Informer {
  readonly #host: InformerHost;
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(host: InformerHost) {
    this.#host = host;
  }

  /** Queues a message; `duration` 0 keeps it until {@link hide}. Returns its id. */
  info(message: string | { message: string; details?: string }, type: InfoType = 'info', duration = 3000): string {
    const { message: text, details } = typeof message === 'string' ? { message, details: undefined } : message;
    const same = this.#host.current().find((i) => i.message === text && i.type === type && i.details === details);
    if (same) {
      this.#schedule(same, duration);
      return same.id;
    }
    counter += 1;
    const info: InfoMessage = { id: `info-${counter}`, type, message: text, duration, ...(details ? { details } : {}) };
    this.#host.show(info);
    this.#schedule(info, duration);
    return info.id;
  }

  /** Whether message `id` still shows. */
  showing(id: string): boolean {
    return this.#host.current().some((i) => i.id === id);
  }

  /** Replaces the text of message `id` in place and restarts its duration; nothing if it is gone. */
  update(id: string, message: string, type: InfoType, duration: number): void {
    if (!this.showing(id)) return;
    const info: InfoMessage = { id, type, message, duration };
    this.#host.show(info);
    this.#schedule(info, duration);
  }

  /** Hides the message `id`, or the oldest one when no id is given. */
  hide(id?: string): void {
    const queue = this.#host.current();
    const info = id === undefined ? queue[0] : queue.find((i) => i.id === id);
    if (!info) return;
    const timer = this.#timers.get(info.id);
    if (timer !== undefined) clearTimeout(timer);
    this.#timers.delete(info.id);
    this.#host.hide(info);
  }

  /** Clears every pending timer (the messages stay in state). */
  destroy(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #schedule(info: InfoMessage, duration: number): void {
    const old = this.#timers.get(info.id);
    if (old !== undefined) clearTimeout(old);
    this.#timers.delete(info.id);
    if (duration > 0)
      this.#timers.set(
        info.id,
        setTimeout(() => this.hide(info.id), duration),
      );
  }
}
