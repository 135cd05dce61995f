/**
 * What going offline and online does to an engine: offline pauses every active upload and shows
 * 'No Internet connection' until the connection is back; online hides it and resumes exactly the
 * uploads that going offline paused.
 */
import { type OnlineSource, OnlineWatcher } from './online.ts';

export interface ConnectivityHost {
  setOffline(offline: boolean): void;
  info(message: string, type: 'error' | 'success', duration: number): string;
  hideInfo(id: string): void;
  i18n(key: string): string;
  /** Files whose upload is running now. */
  runningIds(): string[];
  /** Pauses a running upload because the connection went away. */
  pauseOffline(id: string): void;
  /** Resumes a file paused by {@link pauseOffline}, if it is still paused. */
  resumeOffline(id: string): void;
}

export class Connectivity {
  readonly #host: ConnectivityHost;
  readonly #watcher: OnlineWatcher;
  readonly #paused = new Set<string>();
  #info: string | undefined;

  constructor(host: ConnectivityHost, source: OnlineSource, interval?: number) {
    this.#host = host;
    this.#watcher = new OnlineWatcher(source, (online) => this.#changed(online), interval);
    if (!this.#watcher.online) this.#changed(false);
  }

  /** Reads connectivity now (not only at the next poll), so retry decisions see it at once. */
  isOnline(): boolean {
    this.#watcher.check();
    return this.#watcher.online;
  }

  /** The file left the store or was resumed by hand: going online must not touch it. */
  forget(id: string): void {
    this.#paused.delete(id);
  }

  stop(): void {
    this.#watcher.stop();
  }

  #changed(online: boolean): void {
    this.#host.setOffline(!online);
    if (!online) {
      this.#info = this.#host.info(this.#host.i18n('noInternetConnection'), 'error', 0);
      for (const id of this.#host.runningIds()) {
        this.#paused.add(id);
        this.#host.pauseOffline(id);
      }
      return;
    }
    if (this.#info) this.#host.hideInfo(this.#info);
    this.#info = undefined;
    this.#host.info(this.#host.i18n('connectedToInternet'), 'success', 3000);
    const ids = [...this.#paused];
    this.#paused.clear();
    for (const id of ids) this.#host.resumeOffline(id);
  }
}
