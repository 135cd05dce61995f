/**
 * Online watcher: polls `navigator.onLine` every `interval` ms (the spec's 3000) and listens to
 * the window's online/offline events; reports each change once.
 */

export const DEFAULT_ONLINE_CHECK_INTERVAL = 3000;

export interface OnlineSource {
  /** Current connectivity (default: `navigator.onLine`, true where there is no navigator). */
  isOnline(): boolean;
  /** Where `online` / `offline` events fire (default: `window`, when there is one). */
  target?: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>;
}

export function browserOnlineSource(): OnlineSource {
  const nav = (globalThis as { navigator?: { onLine?: boolean } }).navigator;
  const target = (globalThis as { window?: EventTarget }).window;
  return { isOnline: () => nav?.onLine !== false, target };
}

export class OnlineWatcher {
  readonly #source: OnlineSource;
  readonly #onChange: (online: boolean) => void;
  readonly #timer: ReturnType<typeof setInterval>;
  #online: boolean;

  constructor(source: OnlineSource, onChange: (online: boolean) => void, interval = DEFAULT_ONLINE_CHECK_INTERVAL) {
    this.#source = source;
    this.#onChange = onChange;
    this.#online = source.isOnline();
    this.#timer = setInterval(this.check, interval);
    // Under Node (SSR, tests) the poll must not keep the process alive on its own.
    (this.#timer as { unref?: () => void }).unref?.();
    source.target?.addEventListener('online', this.check);
    source.target?.addEventListener('offline', this.check);
  }

  get online(): boolean {
    return this.#online;
  }

  /** Reads connectivity now and reports a change. */
  check = (): void => {
    const now = this.#source.isOnline();
    if (now === this.#online) return;
    this.#online = now;
    this.#onChange(now);
  };

  stop(): void {
    clearInterval(this.#timer);
    this.#source.target?.removeEventListener('online', this.check);
    this.#source.target?.removeEventListener('offline', this.check);
  }
}
