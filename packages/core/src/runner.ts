/**
 * Runs uploads: one attempt per file, or per bundle (every file of a run in one request), through
 * the shared limiter, with a stall timer, throttled progress and an abort reason (pause, cancel,
 * remove, stall, offline). A file's run settles when it completes, fails or leaves the store; a
 * paused file stays unsettled until resumed. Single files and bundles share this bookkeeping, so
 * cancel, remove and `destroy()` stop both, and both complete through {@link Runner#succeeded}.
 */
import type { Emitter } from './emitter.ts';
import type { FerryEvents } from './events.ts';
import { Limiter } from './limiter.ts';
import { ProgressBatcher } from './progress-batcher.ts';
import type { Action, ProgressUpdate } from './reducer.ts';
import { StallTimer } from './stall.ts';
import type { FerryFile, UploadError, UploadResponse } from './types.ts';
import {
  type AbortReason,
  type BundleContext,
  toUploadError,
  type UploadContext,
  type Uploader,
  type UploadResult,
} from './uploader.ts';

/** What the runner needs from the engine. */
export interface EngineHost {
  getFile(id: string): FerryFile | undefined;
  dispatch(action: Action): void;
  emit: Emitter<FerryEvents>['emit'];
  i18n(key: string, vars?: Record<string, string | number>): string;
  failed(file: FerryFile, error: UploadError): void;
  isOnline(): boolean;
  uploaderFor(file: FerryFile): Uploader | undefined;
  postprocess(ids: string[]): Promise<void>;
  hasPostprocessors(): boolean;
  /** The companion uploaders that go through one talk to. */
  readonly companionUrl: string | undefined;
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
  restartQueued: boolean;
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

  /** Starts every file and resolves once all have settled. */
  run(ids: readonly string[]): Promise<void> {
    return Promise.all(ids.map((id) => this.#wait(id, () => void this.#attempt(id)))).then(() => undefined);
  }

  /**
   * Sends the files in one request through `uploader.uploadBundle` and resolves once all have
   * settled. One failure fails them all; removing one file aborts the request and sends the rest
   * again.
   */
  runBundle(ids: readonly string[], uploader: Uploader): Promise<void> {
    const fresh = ids.filter((id) => !this.#waiting.has(id));
    if (fresh.length === 0) return Promise.resolve();
    const bundle: Bundle = { ids: fresh, uploader, restartQueued: false };
    const settled = fresh.map((id) => {
      this.#bundles.set(id, bundle);
      return this.#wait(id, () => undefined);
    });
    void this.#attemptBundle(bundle);
    return Promise.all(settled).then(() => undefined);
  }

  /** Whether the file belongs to a run that has not settled (so resuming restarts it). */
  isPending(id: string): boolean {
    return this.#waiting.has(id);
  }

  isRunning(id: string): boolean {
    return this.#running.has(id);
  }

  runningIds(): string[] {
    return [...this.#running.keys()];
  }

  /** Restarts a pending file (after pause or offline); a bundle restarts once per tick. */
  resume(id: string): void {
    if (!this.#waiting.has(id) || this.#running.has(id)) return;
    const bundle = this.#bundles.get(id);
    if (bundle) this.#restartBundle(bundle);
    else void this.#attempt(id);
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

  /** Registers a caller waiting for the file's run; `start` runs when the file was not pending. */
  #wait(id: string, start: () => void): Promise<void> {
    return new Promise((resolve) => {
      const list = this.#waiting.get(id);
      if (list) list.push(resolve);
      else this.#waiting.set(id, [resolve]);
      if (!list) start();
    });
  }

  #settle(id: string): void {
    const list = this.#waiting.get(id);
    this.#waiting.delete(id);
    this.#bundles.delete(id);
    for (const resolve of list ?? []) resolve();
  }

  /** Takes a limiter slot and starts the run's files; no release when it was aborted meanwhile. */
  async #begin(run: Run): Promise<(() => void) | undefined> {
    for (const id of run.ids) this.#running.set(id, run);
    const { signal } = run.controller;
    let release: () => void;
    try {
      release = await this.#limiter.acquire(signal);
    } catch {
      return undefined; // paused or removed while queued: whoever aborted has set the state
    }
    if (!signal.aborted) await this.#queueStart(run.ids);
    if (!signal.aborted) return release;
    release();
    return undefined;
  }

  #end(run: Run, release?: () => void): void {
    release?.();
    for (const id of run.ids) if (this.#running.get(id) === run) this.#running.delete(id);
  }

  async #attempt(id: string): Promise<void> {
    const file = this.#host.getFile(id);
    const uploader = file && this.#host.uploaderFor(file);
    if (!file || !uploader) {
      if (file) this.#fail([id], { message: 'No uploader is configured for this file', retryable: false });
      else this.#settle(id);
      return;
    }
    const run: Run = { ids: [id], controller: new AbortController() };
    const release = await this.#begin(run);
    const started = this.#host.getFile(id);
    if (!release || !started) {
      this.#end(run, release);
      if (!run.controller.signal.aborted) this.#settle(id);
      return;
    }
    const context: UploadContext = {
      ...this.#context(run),
      onProgress: (sent, total) => this.#progress(run, [{ id, bytesUploaded: sent, bytesTotal: total }]),
      patchFile: (patch) => this.#patch(id, patch),
    };
    await this.#send(run, release, async () => [[id, await uploader.upload(started, context)]]);
  }

  async #attemptBundle(bundle: Bundle): Promise<void> {
    const upload = bundle.uploader.uploadBundle;
    // Files of the bundle still to send: not settled, not paused, not already on their way.
    const ids = bundle.ids.filter(
      (id) => this.#waiting.has(id) && !this.#running.has(id) && this.#host.getFile(id)?.state !== 'paused',
    );
    if (!upload || ids.length === 0) return;
    const run: Run = { ids, controller: new AbortController() };
    try {
      await this.#sendBundle(run, bundle, upload);
    } finally {
      // Removing one file aborted the request: the files left go again.
      if (run.reason === 'remove') this.#restartBundle(bundle);
    }
  }

  async #sendBundle(run: Run, bundle: Bundle, upload: NonNullable<Uploader['uploadBundle']>): Promise<void> {
    const release = await this.#begin(run);
    const files = run.ids.map((id) => this.#host.getFile(id)).filter((f): f is FerryFile => f !== undefined);
    if (!release || files.length === 0) {
      this.#end(run, release);
      return;
    }
    const sizes = files.map((f) => f.size ?? 0);
    const context: BundleContext = {
      ...this.#context(run),
      // Spread bytes over the files in order: earlier parts of the body are earlier files.
      onProgress: (sent) => {
        let left = sent;
        const updates = files.map((f, i) => {
          const size = sizes[i] ?? 0;
          const done = Math.max(0, Math.min(size, left));
          left -= size;
          return { id: f.id, bytesUploaded: done, bytesTotal: size };
        });
        this.#progress(run, updates);
      },
      patchFile: (id, patch) => this.#patch(id, patch),
    };
    await this.#send(run, release, async () => {
      const results = await upload.call(bundle.uploader, files, context);
      return files.map((f, i) => [f.id, results[i] ?? results[0] ?? {}]);
    });
  }

  #restartBundle(bundle: Bundle): void {
    if (bundle.restartQueued) return;
    bundle.restartQueued = true;
    queueMicrotask(() => {
      bundle.restartQueued = false;
      void this.#attemptBundle(bundle);
    });
  }

  /** What a single upload's and a bundle's contexts share. */
  #context(run: Run): Pick<UploadContext, 'signal' | 'reason' | 'isOnline' | 'i18n' | 'companionUrl'> {
    return {
      companionUrl: this.#host.companionUrl,
      signal: run.controller.signal,
      reason: () => run.reason,
      isOnline: () => this.#host.isOnline(),
      i18n: (key, vars) => this.#host.i18n(key, vars),
    };
  }

  /** Runs the request with a stall timer and settles its files by how it ended. */
  async #send(run: Run, release: () => void, request: () => Promise<[string, UploadResult][]>): Promise<void> {
    const { signal } = run.controller;
    for (const id of run.ids) {
      const file = this.#host.getFile(id);
      if (file) this.#host.emit('upload-start', file);
    }
    const stall = new StallTimer(this.#options.stallTimeout, () => this.abort(run.ids[0] ?? '', 'stall'));
    run.stall = stall;
    try {
      const results = await request();
      if (signal.aborted) this.#aborted(run);
      else await this.#succeeded(results);
    } catch (cause) {
      if (signal.aborted) this.#aborted(run);
      else this.#fail(run.ids, toUploadError(cause));
    } finally {
      stall.stop();
      this.#end(run, release);
    }
  }

  #progress(run: Run, updates: ProgressUpdate[]): void {
    if (run.controller.signal.aborted) return;
    run.stall?.progress();
    this.#batcher.reportMany(updates);
  }

  #patch(id: string, patch: Parameters<UploadContext['patchFile']>[0]): void {
    if (this.#host.getFile(id)) this.#host.dispatch({ type: 'patch', id, patch });
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
  async #succeeded(results: [string, UploadResult][]): Promise<void> {
    const done: [string, UploadResponse][] = [];
    for (const [id, result] of results) {
      this.#batcher.forget(id);
      if (this.#host.getFile(id)) done.push([id, { ...result }]);
      else this.#settle(id);
    }
    if (done.length === 0) return;
    const ids = done.map(([id]) => id);
    if (!this.#host.hasPostprocessors()) {
      for (const [id, response] of done) {
        this.#host.dispatch({ type: 'success', id, response });
        this.#emitSuccess(id, response);
        this.#settle(id);
      }
      return;
    }
    for (const [id, response] of done) {
      const uploadURL = response.uploadURL ?? this.#host.getFile(id)?.uploadURL;
      this.#host.dispatch({ type: 'patch', id, patch: { uploadURL, response } });
    }
    this.#host.dispatch({ type: 'postprocess', ids });
    for (const [id, response] of done) this.#emitSuccess(id, response);
    await this.#host.postprocess(ids);
    for (const [id, response] of done) {
      if (this.#host.getFile(id)?.state === 'postprocessing') this.#host.dispatch({ type: 'success', id, response });
      this.#settle(id);
    }
  }

  #emitSuccess(id: string, response: UploadResponse): void {
    const file = this.#host.getFile(id);
    if (file) this.#host.emit('upload-success', file, response);
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
