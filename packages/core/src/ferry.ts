/**
 * The engine a page talks to: the public methods over the store, the runner, restrictions, the
 * informer and the online watcher. Behaviour lives in those modules; this file wires them.
 */

import { runBundle } from './bundle.ts';
import { Emitter } from './emitter.ts';
import type { FerryEvents } from './events.ts';
import { createFile, FileIndex, fileKey, newFileId } from './files.ts';
import { Informer } from './informer.ts';
import { defaultLocale, type LocaleEntry, type LocaleStrings, type LocaleVars, translate } from './locale.ts';
import { browserOnlineSource, type OnlineSource, OnlineWatcher } from './online.ts';
import { DEFAULT_PROGRESS_THROTTLE } from './progress-batcher.ts';
import { type Action, type FilePatch, initialState, reduce } from './reducer.ts';
import { checkFile, checkMinFiles, noRestrictions, type Rejection } from './restrictions.ts';
import { Runner } from './runner.ts';
import { DEFAULT_STALL_TIMEOUT } from './stall.ts';
import { Store } from './store.ts';
import type {
  FerryFile,
  FerryState,
  FileDescriptor,
  InfoType,
  Restrictions,
  UploadError,
  UploadSummary,
} from './types.ts';
import type { Uploader } from './uploader.ts';

export type { FerryEvents } from './events.ts';

/** A pre- or postprocessor: runs over the ids of one upload run. */
export type Processor = (fileIds: string[]) => Promise<void> | void;

export interface FerryOptions {
  id?: string;
  /** Uploader for local files (e.g. `new TusUploader({ endpoint: '/files/' })`). */
  uploader?: Uploader;
  /** Uploader for files with `isRemote` (companion transfers); defaults to `uploader`. */
  remoteUploader?: Uploader;
  restrictions?: Partial<Restrictions>;
  /** Upload as soon as files are added. */
  autoProceed?: boolean;
  /** Concurrent uploads across files; 0 = unlimited (the default). */
  limit?: number;
  locale?: Partial<Record<keyof LocaleStrings | (string & {}), LocaleEntry>>;
  meta?: Record<string, string>;
  /** Return false to refuse a file, or a descriptor to replace it. */
  onBeforeFileAdded?: (file: FerryFile) => boolean | FileDescriptor;
  /** No progress for this long aborts an upload (ms; default 30 000; 0 disables). */
  stallTimeout?: number;
  /** Minimum time between progress state changes (ms; default 500). */
  progressThrottle?: number;
  /** Connectivity source; the browser's by default. */
  online?: OnlineSource;
  /** Online poll interval (ms; default 3000). */
  onlineCheckInterval?: number;
}

export class Ferry {
  readonly id: string;
  readonly #store = new Store<FerryState, Action>(initialState, reduce);
  readonly #events = new Emitter<FerryEvents>();
  readonly #index = new FileIndex();
  readonly #options: FerryOptions;
  readonly #restrictions: Restrictions;
  readonly #locale: Partial<Record<string, LocaleEntry>>;
  readonly #informer: Informer;
  readonly #runner: Runner;
  readonly #watcher: OnlineWatcher;
  readonly #pre = new Set<Processor>();
  readonly #post = new Set<Processor>();
  readonly #pausedOffline = new Set<string>();
  #offlineInfo: string | undefined;
  #autoQueued = false;

  constructor(options: FerryOptions = {}) {
    this.id = options.id ?? 'ferry';
    this.#options = options;
    this.#restrictions = { ...noRestrictions, ...options.restrictions };
    this.#locale = { ...defaultLocale, ...options.locale };
    if (options.meta) this.#store.dispatch({ type: 'meta', meta: options.meta });
    this.#informer = new Informer({
      current: () => this.getState().info,
      show: (info) => {
        this.#store.dispatch({ type: 'info-show', info });
        this.#events.emit('info-visible', info);
      },
      hide: (info) => {
        this.#store.dispatch({ type: 'info-hide', id: info.id });
        this.#events.emit('info-hidden', info);
      },
    });
    this.#runner = new Runner(
      {
        getFile: (id) => this.getFile(id),
        dispatch: (action) => this.#dispatch(action),
        emit: (event, ...args) => this.#events.emit(event, ...args),
        i18n: (key, vars) => this.i18n(key, vars),
        failed: (file, error) => this.#failed(file, error),
        isOnline: () => this.#isOnline(),
        uploaderFor: (file) => (file.isRemote ? (options.remoteUploader ?? options.uploader) : options.uploader),
        postprocess: (ids) => this.#process(this.#post, ids, 'postprocess'),
        hasPostprocessors: () => this.#post.size > 0,
      },
      {
        limit: options.limit ?? 0,
        stallTimeout: options.stallTimeout ?? DEFAULT_STALL_TIMEOUT,
        progressThrottle: options.progressThrottle ?? DEFAULT_PROGRESS_THROTTLE,
      },
    );
    this.#watcher = new OnlineWatcher(
      options.online ?? browserOnlineSource(),
      (online) => this.#onlineChanged(online),
      options.onlineCheckInterval,
    );
    if (!this.#watcher.online) this.#onlineChanged(false);
    this.on('preprocess-progress', (f, p) =>
      this.#dispatch({ type: 'processing', id: f.id, phase: 'preprocess', progress: p }),
    );
    this.on('postprocess-progress', (f, p) =>
      this.#dispatch({ type: 'processing', id: f.id, phase: 'postprocess', progress: p }),
    );
  }

  getState = (): FerryState => this.#store.getState();
  subscribe = this.#store.subscribe;
  on: Emitter<FerryEvents>['on'] = (event, handler) => this.#events.on(event, handler);
  off: Emitter<FerryEvents>['off'] = (event, handler) => this.#events.off(event, handler);
  /** Emits an event (for plugins: pre/postprocess progress...). */
  emit: Emitter<FerryEvents>['emit'] = (event, ...args) => this.#events.emit(event, ...args);

  getFile(id: string): FerryFile | undefined {
    return this.getState().files[id];
  }

  /** Every file, in the order added. */
  getFiles(): FerryFile[] {
    const { files, fileIds } = this.getState();
    return fileIds.map((id) => files[id]).filter((f): f is FerryFile => f !== undefined);
  }

  get restrictions(): Readonly<Restrictions> {
    return this.#restrictions;
  }

  i18n = (key: string, vars?: LocaleVars): string => translate(this.#locale, key, vars);

  info(message: string | { message: string; details?: string }, type: InfoType = 'info', duration = 3000): string {
    return this.#informer.info(message, type, duration);
  }

  hideInfo(id?: string): void {
    this.#informer.hide(id);
  }

  /** Adds one file; its id, or null when it was refused. */
  addFile(descriptor: FileDescriptor): string | null {
    return this.addFiles([descriptor])[0] ?? null;
  }

  /** Adds files in one state change; refused files are reported and shown in one toast. */
  addFiles(descriptors: Iterable<FileDescriptor>): string[] {
    const accepted: FerryFile[] = [];
    const rejected: Rejection[] = [];
    const meta = this.getState().meta;
    for (const original of descriptors) {
      let d = original;
      let file = createFile(d, newFileId(), meta);
      const verdict = this.#options.onBeforeFileAdded?.(file);
      if (verdict === false) {
        const rejection: Rejection = {
          code: 'rejected-by-callback',
          message: this.i18n('rejectedByCallback', { file: file.name }),
          fileName: file.name,
        };
        this.#events.emit('restriction-failed', d, rejection);
        continue;
      }
      if (verdict && typeof verdict === 'object') {
        d = { ...d, ...verdict };
        file = createFile(d, file.id, meta);
      }
      const key = fileKey(file);
      const rejection = checkFile(file, this.#restrictions, this.#index.figures(key), this.i18n);
      if (rejection) {
        rejected.push(rejection);
        this.#events.emit('restriction-failed', d, rejection);
        continue;
      }
      this.#index.add(file, key);
      accepted.push(file);
    }
    this.#informRejections(rejected);
    if (accepted.length > 0) {
      this.#dispatch({ type: 'add', files: accepted });
      for (const file of accepted) this.#events.emit('file-added', file);
      this.#events.emit('files-added', accepted);
      if (this.#options.autoProceed) this.#scheduleAutoUpload();
    }
    return accepted.map((f) => f.id);
  }

  removeFile(id: string): void {
    this.removeFiles([id]);
  }

  removeFiles(ids: readonly string[], reason: 'removed-by-user' | 'cancel-all' = 'removed-by-user'): void {
    const files = ids.map((id) => this.getFile(id)).filter((f): f is FerryFile => f !== undefined);
    if (files.length === 0) return;
    for (const f of files) {
      if (!this.#runner.isRunning(f.id) && f.state !== 'complete') {
        const uploader = f.isRemote ? (this.#options.remoteUploader ?? this.#options.uploader) : this.#options.uploader;
        void uploader?.cancel?.(f).catch(() => undefined);
      }
      this.#runner.abort(f.id, reason === 'cancel-all' ? 'cancel' : 'remove');
      this.#index.remove(f);
      this.#pausedOffline.delete(f.id);
    }
    this.#dispatch({ type: 'remove', ids: files.map((f) => f.id) });
    for (const f of files) {
      this.#runner.drop(f.id, reason === 'cancel-all' ? 'cancel' : 'remove');
      this.#events.emit('file-removed', f, reason);
    }
  }

  /** Uploads every waiting file; resolves when all have completed or failed. */
  async upload(): Promise<UploadSummary> {
    const rejection = checkMinFiles(this.getState().fileIds.length, this.#restrictions, this.i18n);
    if (rejection) {
      this.#events.emit('restriction-failed', undefined, rejection);
      this.info(rejection.message, 'error', 5000);
      return { successful: [], failed: [] };
    }
    const ids = this.getFiles()
      .filter((f) => f.state === 'waiting' && !this.#runner.isPending(f.id))
      .map((f) => f.id);
    return this.#runBatch(ids);
  }

  /** Pauses a running or waiting file, or resumes a paused one; returns the new paused flag. */
  pauseResume(id: string): boolean | undefined {
    const file = this.getFile(id);
    if (!file || this.#bundling()) return undefined;
    if (file.state === 'paused') {
      this.#resume(file);
      return false;
    }
    if (file.state !== 'uploading' && file.state !== 'waiting') return undefined;
    this.#pause(file);
    return true;
  }

  pauseAll(): void {
    for (const f of this.getFiles()) if (f.state === 'uploading' || f.state === 'waiting') this.#pause(f);
    this.#events.emit('pause-all');
  }

  resumeAll(): void {
    for (const f of this.getFiles()) if (f.state === 'paused') this.#resume(f);
    this.#events.emit('resume-all');
  }

  /** Retries one failed file; resolves when it has completed or failed again. */
  async retryUpload(id: string): Promise<UploadSummary> {
    const file = this.getFile(id);
    if (file?.state !== 'error') return { successful: [], failed: [] };
    this.#dispatch({ type: 'retry', ids: [id] });
    this.#events.emit('upload-retry', this.getFile(id) ?? file);
    return this.#runBatch([id]);
  }

  /** Retries every failed file. */
  async retryAll(): Promise<UploadSummary> {
    const failed = this.getFiles().filter((f) => f.state === 'error');
    this.#events.emit('retry-all', failed);
    if (failed.length === 0) return { successful: [], failed: [] };
    const ids = failed.map((f) => f.id);
    this.#dispatch({ type: 'retry', ids });
    return this.#runBatch(ids);
  }

  /** Stops every upload (terminating them on the server) and removes every file. */
  cancelAll(): void {
    this.removeFiles(this.getState().fileIds, 'cancel-all');
    this.#events.emit('cancel-all');
  }

  setMeta(meta: Record<string, string>): void {
    this.#dispatch({ type: 'meta', meta });
  }

  setFileMeta(id: string, meta: Record<string, string>): void {
    this.#dispatch({ type: 'file-meta', id, meta });
  }

  /** Sets uploader bookkeeping or presentation fields (preview...) on a file. */
  setFileState(id: string, patch: FilePatch): void {
    this.#dispatch({ type: 'patch', id, patch });
  }

  setCapabilities(capabilities: Record<string, unknown>): void {
    this.#dispatch({ type: 'capabilities', capabilities });
  }

  addPreProcessor(fn: Processor): void {
    this.#pre.add(fn);
  }
  removePreProcessor(fn: Processor): void {
    this.#pre.delete(fn);
  }
  addPostProcessor(fn: Processor): void {
    this.#post.add(fn);
  }
  removePostProcessor(fn: Processor): void {
    this.#post.delete(fn);
  }

  /** Stops uploads, timers and listeners. */
  destroy(): void {
    this.#runner.destroy();
    this.#watcher.stop();
    this.#informer.destroy();
  }

  #dispatch(action: Action): void {
    const before = this.getState().totalProgress;
    this.#store.dispatch(action);
    const after = this.getState().totalProgress;
    if (after !== before) this.#events.emit('progress', after);
  }

  /** Reads connectivity now (not only at the next poll), so retry decisions see it at once. */
  #isOnline(): boolean {
    this.#watcher.check();
    return this.#watcher.online;
  }

  #bundling(): boolean {
    return this.#options.uploader?.bundles?.() === true;
  }

  async #runBatch(ids: string[]): Promise<UploadSummary> {
    this.#events.emit('upload', ids);
    if (ids.length > 0) {
      await this.#process(this.#pre, ids, 'preprocess');
      const ready = ids.filter((id) => this.getFile(id)?.state === 'waiting');
      const uploader = this.#options.uploader;
      if (uploader && this.#bundling()) await runBundle(uploader, ready, this.#bundleHost());
      else await this.#runner.run(ready);
    }
    const files = ids.map((id) => this.getFile(id)).filter((f): f is FerryFile => f !== undefined);
    const result = {
      successful: files.filter((f) => f.state === 'complete'),
      failed: files.filter((f) => f.state === 'error'),
    };
    this.#events.emit('complete', result);
    return result;
  }

  #bundleHost() {
    return {
      getFile: (id: string) => this.getFile(id),
      dispatch: (action: Action) => this.#dispatch(action),
      emit: this.emit,
      i18n: this.i18n,
      failed: (file: FerryFile, error: UploadError) => this.#failed(file, error),
      isOnline: () => this.#isOnline(),
      limiter: this.#runner.limiter,
      postprocess: (ids: string[]) => this.#process(this.#post, ids, 'postprocess'),
      hasPostprocessors: () => this.#post.size > 0,
    };
  }

  async #process(processors: Set<Processor>, ids: string[], phase: 'preprocess' | 'postprocess'): Promise<void> {
    if (processors.size === 0) return;
    if (phase === 'preprocess') this.#dispatch({ type: 'set-state', ids, state: 'preprocessing' });
    try {
      for (const fn of processors) await fn(ids);
    } catch (cause) {
      const error = { message: cause instanceof Error ? cause.message : String(cause), retryable: true };
      for (const id of ids) {
        this.#dispatch({ type: 'error', id, error });
        const file = this.getFile(id);
        if (file) this.#failed(file, error);
      }
      return;
    }
    for (const id of ids) {
      this.#dispatch({ type: 'processing', id, phase, progress: undefined });
      const file = this.getFile(id);
      if (file) this.#events.emit(`${phase}-complete`, file);
    }
    if (phase === 'preprocess') {
      const still = ids.filter((id) => this.getFile(id)?.state === 'preprocessing');
      this.#dispatch({ type: 'set-state', ids: still, state: 'waiting' });
    }
  }

  #pause(file: FerryFile): void {
    this.#runner.abort(file.id, 'pause');
    this.#dispatch({ type: 'set-state', ids: [file.id], state: 'paused' });
    this.#events.emit('upload-pause', this.getFile(file.id) ?? file, true);
  }

  #resume(file: FerryFile): void {
    this.#pausedOffline.delete(file.id);
    this.#dispatch({ type: 'set-state', ids: [file.id], state: 'waiting' });
    this.#events.emit('upload-pause', this.getFile(file.id) ?? file, false);
    this.#runner.resume(file.id);
  }

  #failed(file: FerryFile, error: UploadError): void {
    this.#events.emit('upload-error', file, error);
    this.info({ message: this.i18n('uploadError'), details: error.message }, 'error', 5000);
  }

  #informRejections(rejected: Rejection[]): void {
    const first = rejected[0];
    if (!first) return;
    const message =
      rejected.length === 1
        ? first.message
        : this.i18n('andNMore', { message: first.message, smart_count: rejected.length - 1 });
    this.info(message, 'error', 5000);
  }

  #onlineChanged(online: boolean): void {
    this.#dispatch({ type: 'offline', isOffline: !online });
    if (!online) {
      this.#events.emit('is-offline');
      this.#offlineInfo = this.info(this.i18n('noInternetConnection'), 'error', 0);
      for (const id of this.#runner.runningIds()) {
        const file = this.getFile(id);
        if (!file) continue;
        this.#runner.abort(id, 'offline');
        this.#pausedOffline.add(id);
        this.#dispatch({ type: 'set-state', ids: [id], state: 'paused' });
        this.#events.emit('upload-pause', this.getFile(id) ?? file, true);
      }
      return;
    }
    this.#events.emit('is-online');
    if (this.#offlineInfo) this.hideInfo(this.#offlineInfo);
    this.#offlineInfo = undefined;
    this.info(this.i18n('connectedToInternet'), 'success', 3000);
    const ids = [...this.#pausedOffline];
    this.#pausedOffline.clear();
    for (const id of ids) {
      const file = this.getFile(id);
      if (file?.state === 'paused') this.#resume(file);
    }
  }

  #scheduleAutoUpload(): void {
    if (this.#autoQueued) return;
    this.#autoQueued = true;
    queueMicrotask(() => {
      this.#autoQueued = false;
      void this.upload();
    });
  }
}
