/**
 * Runs uploads: one attempt per file, or per bundle (every file of a run in one request), through
 * the shared limiter, with a stall timer, throttled progress and an abort reason (pause, cancel,
 * remove, stall, offline). A file's run settles when it completes, fails or leaves the store; a
 * paused file stays unsettled until resumed. Single files and bundles share this bookkeeping, so
 * cancel, remove and `destroy()` stop both, and both complete through {@link Runner#succeeded}.
 */
import type { ProviderClient } from './companion/provider.ts';
import type { Emitter } from './emitter.ts';
import type { FerryEvents } from './events.ts';
import { Limiter } from './limiter.ts';
import { ProgressBatcher } from './progress-batcher.ts';
import type { Action, FilePatch, ProgressUpdate } from './reducer.ts';
import { StallTimer } from './stall.ts';
import type { FerryFile, UploadError, UploadResponse, UploadSummary } from './types.ts';
import type { AbortReason, BundleContext, UploadContext, Uploader, UploadResult } from './uploader.ts';
import { toUploadError } from './uploader.ts';

/** What the runner needs from the engine. */
export interface EngineHost {
  getFile(id: string): FerryFile | undefined;
  dispatch(action: Action): void;
  emit: Emitter<FerryEvents>['emit'];
  i18n(key: string, vars?: Record<string, string | number>): string;
  failed(file: FerryFile, error: UploadError): void;
  isOnline(): boolean;
  uploaderFor(file: FerryFile): Uploader | undefined;
  preprocess(ids: string[]): Promise<void>;
  postprocess(ids: string[]): Promise<void>;
  hasPostprocessors(): boolean;
  /** The uploader that sends every file of a batch in one request, when the engine's does. */
  bundler(): Uploader | undefined;
  /** A batch has settled (the engine is idle again, maybe). */
  ranBatch(): void;
  /** The companion uploaders that go through one talk to. */
  readonly companionUrl: string | undefined;
  /** The engine's provider clients, for provider files. */
  providerClient?(id: string, companionUrl?: string): ProviderClient | undefined;
  /** The engine's request headers (`FerryOptions.headers`), resolved now. */
  requestHeaders(): Promise<Record<string, string>>;
  /** The file's bytes when they were read ahead (see `read-ahead.ts`). */
  bytesOf?(file: FerryFile): Uint8Array<ArrayBuffer> | undefined;
}

export interface RunnerOptions {
  limit: number;
  stallTimeout: number;
  progressThrottle: number;
}

/** One request in flight: a single file's, or a bundle's shared by all its files. */
interface Run {
  ids: string[];
  controller: AbortController;
  reason?: AbortReason;
  stall?: StallTimer;
}

/** The files handed to {@link Runner.runBundle} together, and the uploader that sends them. */
interface Bundle {
  ids: string[];
  uploader: Uploader;
  queued: boolean;
}

export class Runner {
  readonly #host: EngineHost;
  readonly #options: RunnerOptions;
  readonly #limiter: Limiter;
  readonly #batcher: ProgressBatcher;
  readonly #running = new Map<string, Run>();
  /** Files whose run has not settled, with the callbacks waiting for them. */
  readonly #waiting = new Map<string, (() => void)[]>();
  readonly #bundles = new Map<string, Bundle>();
  readonly #starts: { ids: string[]; go: () => void }[] = [];

  constructor(host: EngineHost, options: RunnerOptions) {
    this.#host = host;
    this.#options = options;
    this.#limiter = new Limiter(options.limit);
    this.#batcher = new ProgressBatcher((updates) => this.#flushProgress(updates), options.progressThrottle);
  }

  /**
   * One batch (`upload()`, a retry, restored files): preprocessing, then the files still waiting
   * run, in one request when the uploader bundles; resolves with the summary, also emitted as
   * `complete`.
   */
  async batch(ids: string[]): Promise<UploadSummary> {
    this.#host.emit('upload', ids);
    if (ids.length > 0) {
      await this.#host.preprocess(ids);
      const ready = ids.filter((id) => this.#host.getFile(id)?.state === 'waiting');
      const bundler = this.#host.bundler();
      await (bundler ? this.runBundle(ready, bundler) : this.run(ready));
      this.#host.ranBatch();
    }
    const files = ids.map((id) => this.#host.getFile(id)).filter((f): f is FerryFile => f !== undefined);
    const result = {
      successful: files.filter((f) => f.state === 'complete'),
      failed: files.filter((f) => f.state === 'error'),
    };
    this.#host.emit('complete', result);
    return result;
  }

  /** Starts every file and resolves once all have settled. */
  run(ids: readonly string[]): Promise<void> {
    return this.#all(ids, (id) => void this.#attempt([id]));
  }

  /**
   * Sends the files in one request through `uploader.uploadBundle` and resolves once all have
   * settled. One failure fails them all; removing one aborts the request and sends the rest again.
   */
  runBundle(ids: readonly string[], uploader: Uploader): Promise<void> {
    const bundle: Bundle = { ids: [], uploader, queued: false };
    const settled = this.#all(ids, (id) => {
      bundle.ids.push(id);
      this.#bundles.set(id, bundle);
    });
    this.#restart(bundle);
    return settled;
  }

  /** Whether the file belongs to a run that has not settled (so resuming restarts it). */
  isPending(id: string): boolean {
    return this.#waiting.has(id);
  }

  isRunning(id: string): boolean {
    return this.#running.has(id);
  }

  /** Whether any file is in a request or waiting for a slot. */
  get busy(): boolean {
    return this.#running.size > 0;
  }

  runningIds(): string[] {
    return [...this.#running.keys()];
  }

  /** Restarts a pending file (after pause or offline); a bundle restarts once per tick. */
  resume(id: string): void {
    if (!this.#waiting.has(id) || this.#running.has(id)) return;
    const bundle = this.#bundles.get(id);
    if (bundle) this.#restart(bundle);
    else void this.#attempt([id]);
  }

  /** Aborts the request carrying the file (a bundle's: all its files), recording why. */
  abort(id: string, reason: AbortReason): void {
    const run = this.#running.get(id);
    if (!run) return;
    run.reason = reason;
    for (const each of run.ids) {
      if (this.#running.get(each) === run) this.#running.delete(each);
      this.#batcher.forget(each);
    }
    run.controller.abort(new DOMException(reason, 'AbortError'));
  }

  /** The file left the store: abort it and release whoever waits for it. */
  drop(id: string, reason: 'cancel' | 'remove'): void {
    this.abort(id, reason);
    this.#settle(id);
  }

  destroy(): void {
    for (const id of [...this.#running.keys()]) this.abort(id, 'cancel');
    for (const id of [...this.#waiting.keys()]) this.#settle(id);
    this.#batcher.stop();
  }

  /** Resolves once every file has settled; `start` runs for each file that was not pending. */
  #all(ids: readonly string[], start: (id: string) => void): Promise<void> {
    const settled = ids.map(
      (id) =>
        new Promise<void>((resolve) => {
          const list = this.#waiting.get(id);
          if (list) return list.push(resolve);
          this.#waiting.set(id, [resolve]);
          start(id);
        }),
    );
    return Promise.all(settled).then(() => undefined);
  }

  #settle(id: string): void {
    const list = this.#waiting.get(id);
    this.#waiting.delete(id);
    this.#bundles.delete(id);
    for (const resolve of list ?? []) resolve();
  }

  /** Starts the bundle's files still to send (not settled, paused or on their way) next tick. */
  #restart(bundle: Bundle): void {
    if (bundle.queued) return;
    bundle.queued = true;
    queueMicrotask(() => {
      bundle.queued = false;
      const ids = bundle.ids.filter(
        (id) => this.#waiting.has(id) && !this.#running.has(id) && this.#host.getFile(id)?.state !== 'paused',
      );
      if (ids.length > 0) void this.#attempt(ids, bundle);
    });
  }

  /** One request for `ids` (one file, or a bundle's files) through a limiter slot. */
  async #attempt(ids: string[], bundle?: Bundle): Promise<void> {
    const first = this.#host.getFile(ids[0] ?? '');
    const uploader = bundle?.uploader ?? (first && this.#host.uploaderFor(first));
    if (!uploader) return this.#fail(ids, { message: 'No uploader is configured for this file', retryable: false });
    const run: Run = { ids, controller: new AbortController() };
    const { signal } = run.controller;
    for (const id of ids) this.#running.set(id, run);
    let release: (() => void) | undefined;
    try {
      release = await this.#limiter.acquire(signal);
      if (!signal.aborted) await this.#queueStart(ids);
      if (signal.aborted) return; // paused or removed meanwhile: whoever aborted has set the state
      const files = ids.map((id) => this.#host.getFile(id)).filter((f): f is FerryFile => f !== undefined);
      if (files.length < ids.length) throw new Error('a file left the store without an abort');
      for (const file of files) this.#host.emit('upload-start', file);
      run.stall = new StallTimer(this.#options.stallTimeout, () => this.abort(ids[0] ?? '', 'stall'));
      const results = await this.#send(run, files, uploader, bundle !== undefined);
      if (signal.aborted) return this.#aborted(run);
      // The bytes are sent: the slot goes to the next upload before postprocessing, which may
      // wait for files still queued (an Assembly runs once all its files have arrived).
      run.stall.stop();
      release();
      await this.#succeeded(files.map((f, i) => [f.id, results[i] ?? results[0] ?? {}]));
    } catch (cause) {
      if (release === undefined) return; // aborted while waiting for a slot
      if (signal.aborted) this.#aborted(run);
      else this.#fail(ids, toUploadError(cause));
    } finally {
      run.stall?.stop();
      release?.();
      for (const id of ids) if (this.#running.get(id) === run) this.#running.delete(id);
      // Removing one file aborted the bundle's request: the files left go again.
      if (bundle && run.reason === 'remove') this.#restart(bundle);
    }
  }

  /** The request: one file's upload, or the bundle's with its progress spread over its files. */
  async #send(run: Run, files: FerryFile[], uploader: Uploader, bundled: boolean): Promise<UploadResult[]> {
    const base = {
      signal: run.controller.signal,
      reason: () => run.reason,
      isOnline: () => this.#host.isOnline(),
      i18n: (key: string, vars?: Record<string, string | number>) => this.#host.i18n(key, vars),
      companionUrl: this.#host.companionUrl,
      providerClient: (id: string, companionUrl?: string) => this.#host.providerClient?.(id, companionUrl),
      headers: () => this.#host.requestHeaders(),
    };
    const progress = (updates: ProgressUpdate[]) => {
      if (run.controller.signal.aborted) return;
      run.stall?.progress();
      this.#batcher.reportMany(updates);
    };
    const patch = (id: string, patch: FilePatch) => {
      if (this.#host.getFile(id)) this.#host.dispatch({ type: 'patch', id, patch });
    };
    const [file] = files;
    if (!bundled && file) {
      const context: UploadContext = {
        ...base,
        onProgress: (sent, total) => progress([{ id: file.id, bytesUploaded: sent, bytesTotal: total }]),
        patchFile: (p) => patch(file.id, p),
        bytes: () => this.#host.bytesOf?.(file),
      };
      return [await uploader.upload(file, context)];
    }
    const context: BundleContext = {
      ...base,
      // Earlier parts of the body are earlier files.
      onProgress: (sent) => {
        let left = sent;
        progress(
          files.map((f) => {
            const size = f.size ?? 0;
            const done = Math.max(0, Math.min(size, left));
            left -= size;
            return { id: f.id, bytesUploaded: done, bytesTotal: size };
          }),
        );
      },
      patchFile: patch,
    };
    return (await uploader.uploadBundle?.(files, context)) ?? [];
  }

  /**
   * Files that get a slot in the same tick start in one state change (starting 10,000 files is
   * one copy of the file map, not 10,000).
   */
  #queueStart(ids: string[]): Promise<void> {
    return new Promise((go) => {
      this.#starts.push({ ids, go });
      if (this.#starts.length === 1) queueMicrotask(() => this.#flushStarts());
    });
  }

  #flushStarts(): void {
    const batch = this.#starts.splice(0);
    const ids = batch.flatMap((b) => b.ids).filter((id) => this.#running.has(id) && this.#host.getFile(id));
    if (ids.length > 0) this.#host.dispatch({ type: 'start', ids, at: Date.now() });
    for (const b of batch) b.go();
  }

  #aborted(run: Run): void {
    if (run.reason === 'stall') {
      const seconds = Math.round(this.#options.stallTimeout / 1000);
      this.#fail(run.ids, { message: this.#host.i18n('uploadStalled', { seconds }), retryable: true });
    }
    // pause / offline: the files wait for resume; cancel / remove: already settled (a bundle's
    // other files go again).
  }

  /**
   * The one completion: without postprocessors a file is complete when upload-success is heard;
   * with them it waits in `postprocessing` while they run over every file of the request at once.
   */
  async #succeeded(results: [string, UploadResponse][]): Promise<void> {
    const post = this.#host.hasPostprocessors();
    const ids = results.map(([id]) => id).filter((id) => this.#host.getFile(id));
    for (const [id, response] of results) {
      this.#batcher.forget(id);
      const uploadURL = response.uploadURL ?? this.#host.getFile(id)?.uploadURL;
      this.#host.dispatch(
        post ? { type: 'patch', id, patch: { uploadURL, response } } : { type: 'success', id, response },
      );
    }
    if (post) this.#host.dispatch({ type: 'postprocess', ids });
    for (const [id, response] of results) {
      const file = this.#host.getFile(id);
      if (file) this.#host.emit('upload-success', file, response);
    }
    if (post && ids.length > 0) await this.#host.postprocess(ids);
    for (const [id, response] of results) {
      if (post && this.#host.getFile(id)?.state === 'postprocessing')
        this.#host.dispatch({ type: 'success', id, response });
      this.#settle(id);
    }
  }

  #fail(ids: string[], error: UploadError): void {
    for (const id of ids) {
      this.#batcher.forget(id);
      this.#host.dispatch({ type: 'error', id, error });
      const file = this.#host.getFile(id);
      if (file) this.#host.failed(file, error);
      this.#settle(id);
    }
  }

  #flushProgress(updates: ProgressUpdate[]): void {
    this.#host.dispatch({ type: 'progress', updates });
    for (const u of updates) {
      const file = this.#host.getFile(u.id);
      if (file?.state === 'uploading') this.#host.emit('upload-progress', file, file.progress);
    }
  }
}
