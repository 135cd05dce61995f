/**
 * Runs uploads: one attempt per file through the shared limiter, with a stall timer, throttled
 * progress and an abort reason (pause, cancel, remove, stall, offline). A file's run settles
 * when it completes, fails or leaves the store; a paused file stays unsettled until resumed.
 */
import type { Emitter } from './emitter.ts';
import type { FerryEvents } from './events.ts';
import { Limiter } from './limiter.ts';
import { ProgressBatcher } from './progress-batcher.ts';
import type { Action } from './reducer.ts';
import { StallTimer } from './stall.ts';
import type { FerryFile, UploadError, UploadResponse } from './types.ts';
import { type AbortReason, toUploadError, type UploadContext, type Uploader, type UploadResult } from './uploader.ts';

export interface RunnerHost {
  getFile(id: string): FerryFile | undefined;
  dispatch(action: Action): void;
  emit: Emitter<FerryEvents>['emit'];
  i18n(key: string, vars?: Record<string, string | number>): string;
  failed(file: FerryFile, error: UploadError): void;
  isOnline(): boolean;
  uploaderFor(file: FerryFile): Uploader | undefined;
  postprocess(ids: string[]): Promise<void>;
  hasPostprocessors(): boolean;
}

export interface RunnerOptions {
  limit: number;
  stallTimeout: number;
  progressThrottle: number;
}

interface Run {
  controller: AbortController;
  reason?: AbortReason;
}

export class Runner {
  readonly #host: RunnerHost;
  readonly #options: RunnerOptions;
  readonly limiter: Limiter;
  readonly #batcher: ProgressBatcher;
  readonly #running = new Map<string, Run>();
  /** Files whose run has not settled, with the callbacks waiting for them. */
  readonly #waiting = new Map<string, (() => void)[]>();
  readonly #starts: { id: string; go: () => void }[] = [];

  constructor(host: RunnerHost, options: RunnerOptions) {
    this.#host = host;
    this.#options = options;
    this.limiter = new Limiter(options.limit);
    this.#batcher = new ProgressBatcher((updates) => this.#flushProgress(updates), options.progressThrottle);
  }

  /** Starts every file and resolves once all have settled. */
  run(ids: readonly string[]): Promise<void> {
    return Promise.all(ids.map((id) => this.#start(id))).then(() => undefined);
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

  /** Restarts a pending file (after pause or offline). */
  resume(id: string): void {
    if (this.#waiting.has(id) && !this.#running.has(id)) void this.#attempt(id);
  }

  /** Aborts the file's request, recording why. */
  abort(id: string, reason: AbortReason): void {
    const run = this.#running.get(id);
    if (!run) return;
    run.reason = reason;
    this.#running.delete(id);
    this.#batcher.forget(id);
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

  #start(id: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.#waiting.get(id);
      if (list) list.push(resolve);
      else this.#waiting.set(id, [resolve]);
      if (!list) void this.#attempt(id);
    });
  }

  #settle(id: string): void {
    const list = this.#waiting.get(id);
    this.#waiting.delete(id);
    for (const resolve of list ?? []) resolve();
  }

  async #attempt(id: string): Promise<void> {
    const run: Run = { controller: new AbortController() };
    this.#running.set(id, run);
    const { signal } = run.controller;
    let release: (() => void) | undefined;
    try {
      release = await this.limiter.acquire(signal);
    } catch {
      return; // paused or removed while queued: whoever aborted has set the state
    }
    if (signal.aborted) return release();
    const file = this.#host.getFile(id);
    const uploader = file && this.#host.uploaderFor(file);
    if (!file || !uploader) {
      release();
      if (this.#running.get(id) === run) this.#running.delete(id);
      if (file) this.#fail(id, { message: 'No uploader is configured for this file', retryable: false });
      else this.#settle(id);
      return;
    }
    await this.#queueStart(id);
    if (signal.aborted || !this.#host.getFile(id)) {
      release();
      if (this.#running.get(id) === run) this.#running.delete(id);
      if (!signal.aborted) this.#settle(id);
      return;
    }
    const started = this.#host.getFile(id);
    if (started) this.#host.emit('upload-start', started);
    const stall = new StallTimer(this.#options.stallTimeout, () => this.abort(id, 'stall'));
    const context: UploadContext = {
      signal,
      onProgress: (sent, total) => {
        if (signal.aborted) return;
        stall.progress();
        this.#batcher.report(id, sent, total);
      },
      patchFile: (patch) => {
        if (this.#host.getFile(id)) this.#host.dispatch({ type: 'patch', id, patch });
      },
      reason: () => run.reason,
      isOnline: () => this.#host.isOnline(),
      i18n: (key, vars) => this.#host.i18n(key, vars),
    };
    try {
      const result = await uploader.upload(started ?? file, context);
      if (signal.aborted) this.#aborted(id, run.reason);
      else await this.#succeeded(id, result);
    } catch (cause) {
      if (signal.aborted) this.#aborted(id, run.reason);
      else this.#fail(id, toUploadError(cause));
    } finally {
      stall.stop();
      release();
      if (this.#running.get(id) === run) this.#running.delete(id);
    }
  }

  /**
   * Files that get a slot in the same tick start in one state change (starting 10,000 files is
   * one copy of the file map, not 10,000).
   */
  #queueStart(id: string): Promise<void> {
    return new Promise((go) => {
      this.#starts.push({ id, go });
      if (this.#starts.length === 1) queueMicrotask(() => this.#flushStarts());
    });
  }

  #flushStarts(): void {
    const batch = this.#starts.splice(0);
    const ids = batch.filter((b) => this.#running.has(b.id)).map((b) => b.id);
    if (ids.length > 0) this.#host.dispatch({ type: 'start', ids, at: Date.now() });
    for (const b of batch) b.go();
  }

  #aborted(id: string, reason: AbortReason | undefined): void {
    if (reason === 'stall') {
      const seconds = Math.round(this.#options.stallTimeout / 1000);
      this.#fail(id, { message: this.#host.i18n('uploadStalled', { seconds }), retryable: true });
    }
    // pause / offline: the file waits for resume; cancel / remove: already settled.
  }

  async #succeeded(id: string, result: UploadResult): Promise<void> {
    this.#batcher.forget(id);
    const response: UploadResponse = { ...result };
    const file = this.#host.getFile(id);
    if (!file) return this.#settle(id);
    if (!this.#host.hasPostprocessors()) {
      // Nothing after the upload: the file is complete when upload-success is heard.
      this.#host.dispatch({ type: 'success', id, response });
      const done = this.#host.getFile(id);
      if (done) this.#host.emit('upload-success', done, response);
      return this.#settle(id);
    }
    this.#host.dispatch({ type: 'patch', id, patch: { uploadURL: result.uploadURL ?? file.uploadURL, response } });
    this.#host.dispatch({ type: 'set-state', ids: [id], state: 'postprocessing' });
    const uploaded = this.#host.getFile(id);
    if (uploaded) this.#host.emit('upload-success', uploaded, response);
    await this.#host.postprocess([id]);
    if (this.#host.getFile(id)?.state === 'postprocessing') this.#host.dispatch({ type: 'success', id, response });
    this.#settle(id);
  }

  #fail(id: string, error: UploadError): void {
    this.#batcher.forget(id);
    this.#host.dispatch({ type: 'error', id, error });
    const file = this.#host.getFile(id);
    if (file) this.#host.failed(file, error);
    this.#settle(id);
  }

  #flushProgress(updates: { id: string; bytesUploaded: number; bytesTotal: number | null }[]): void {
    const before = this.#host.getFile.bind(this.#host);
    this.#host.dispatch({ type: 'progress', updates });
    for (const u of updates) {
      const file = before(u.id);
      if (file?.state === 'uploading') this.#host.emit('upload-progress', file, file.progress);
    }
  }
}
