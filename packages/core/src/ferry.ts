/**
 * The engine a page talks to: the public API over the store (reducer), the runner (uploads),
 * admission (restrictions), the informer, connectivity and the processors. Behaviour lives in
 * those modules; this file wires them and emits the events.
 */
import { Intake, type IntakeHost } from './admission.ts';
import { Assemblies } from './assembly/assembly.ts';
import { importLink, type LinkImportResult } from './companion/link.ts';
import { Providers } from './companion/providers.ts';
import { Connectivity } from './connectivity.ts';
import { Emitter } from './emitter.ts';
import type { FerryEvents } from './events.ts';
import { FileIndex, fileKey } from './files.ts';
import { Informer } from './informer.ts';
import {
  type ActiveLocale,
  type Locale,
  type LocaleOption,
  type LocaleVars,
  resolveLocale,
  translate,
} from './locale.ts';
import { browserOnlineSource } from './online.ts';
import type { FerryOptions } from './options.ts';
import { type Phase, type Processor, Processors } from './processors.ts';
import { DEFAULT_PROGRESS_THROTTLE } from './progress-batcher.ts';
import { ReadAhead } from './read-ahead.ts';
import { recoveryHost } from './recovery/host.ts';
import { Recovery } from './recovery/recovery.ts';
import { type Action, type FilePatch, initialState, reduce } from './reducer.ts';
import { Refusals } from './refusals.ts';
import { checkMinFiles, noRestrictions } from './restrictions.ts';
import { type EngineHost, Runner } from './runner.ts';
import { DEFAULT_EAGER_UP_TO, SizeReader, type SizingHost } from './sizing.ts';
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
import { resolveHeaders, type Uploader } from './uploader.ts';

export type { FerryEvents } from './events.ts';
export type { FerryOptions } from './options.ts';
export type { Processor } from './processors.ts';

export class Ferry {
  readonly id: string;
  readonly companionUrl: string | undefined;
  /** Clients and browsers of the companion's cloud providers (Google Drive, Instagram...). */
  readonly providers: Providers;
  readonly #store = new Store<FerryState, Action>(initialState, reduce);
  readonly #events = new Emitter<FerryEvents>();
  readonly #index = new FileIndex();
  readonly #options: FerryOptions;
  readonly #restrictions: Restrictions;
  #locale: Locale;
  readonly #informer: Informer;
  readonly #refusals: Refusals;
  readonly #runner: Runner;
  readonly #connectivity: Connectivity;
  readonly #processors = new Processors();
  readonly #assemblies: Assemblies | undefined;
  readonly #sizes: SizeReader;
  readonly #readAhead: ReadAhead;
  readonly #intake: Intake;
  /** Present when `recovery` is on and the page has IndexedDB. */
  readonly recovery: Recovery | undefined;
  #autoQueued = false;

  constructor(options: FerryOptions = {}) {
    this.id = options.id ?? 'ferry';
    this.companionUrl = options.companionUrl;
    this.#options = options;
    this.providers = new Providers(() => this.companionUrl, this, {
      ...options.providerOptions,
      headers: () => this.requestHeaders(),
    });
    this.#restrictions = { ...noRestrictions, ...options.restrictions };
    this.#locale = resolveLocale(options.locale);
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
    this.#refusals = new Refusals(this.#informer, this.i18n);
    this.#runner = new Runner(this.#engineHost(), {
      limit: options.limit ?? 0,
      stallTimeout: options.stallTimeout ?? DEFAULT_STALL_TIMEOUT,
      progressThrottle: options.progressThrottle ?? DEFAULT_PROGRESS_THROTTLE,
    });
    this.#sizes = new SizeReader(this.#sizingHost(), options.sizing);
    this.#intake = new Intake(this.#intakeHost(options.sizing?.eagerUpTo ?? DEFAULT_EAGER_UP_TO));
    this.#readAhead = new ReadAhead(
      { getFile: (id) => this.getFile(id), idle: () => this.getState().sizesPending === 0 && !this.#runner.busy },
      options.readAhead === false ? { maxFileSize: 0 } : options.readAhead,
    );
    // Uploaded: its bytes are not needed again.
    this.on('upload-success', (file) => this.#readAhead.drop(file.id));
    this.#connectivity = new Connectivity(
      {
        setOffline: (offline) => {
          this.#dispatch({ type: 'offline', isOffline: offline });
          this.#events.emit(offline ? 'is-offline' : 'is-online');
        },
        info: (message, type, duration) => this.info(message, type, duration),
        hideInfo: (id) => this.hideInfo(id),
        i18n: (key) => this.i18n(key),
        runningIds: () => this.#runner.runningIds(),
        pauseOffline: (id) => {
          const file = this.getFile(id);
          if (file) this.#pause(file, 'offline');
        },
        resumeOffline: (id) => {
          const file = this.getFile(id);
          if (file?.state === 'paused') this.#resume(file);
        },
      },
      options.online ?? browserOnlineSource(),
      options.onlineCheckInterval,
    );
    for (const phase of ['preprocess', 'postprocess'] as const) {
      this.on(`${phase}-progress`, (f, progress) => this.#dispatch({ type: 'processing', id: f.id, phase, progress }));
    }
    this.#assemblies = options.assembly ? new Assemblies(this, options.assembly) : undefined;
    const recovery = options.recovery === true ? {} : options.recovery || undefined;
    if (recovery && (recovery.indexedDB ?? globalThis.indexedDB) !== undefined) {
      const host = recoveryHost(this, {
        index: this.#index,
        dispatch: (action) => this.#dispatch(action),
        run: (ids) => void this.#runner.batch(ids),
        uploaderFor: (file) => this.#uploaderFor(file),
        add: (descriptors) => void this.#intake.admit(descriptors, this.#intake.defersSizes(descriptors)),
        slicing: options.sizing,
      });
      this.recovery = new Recovery(host, recovery);
      void this.recovery.start();
    }
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

  i18n = (key: string, vars?: LocaleVars): string => translate(this.#locale.strings, key, vars, this.#locale.code);

  /** The language in use (code and direction); a new object after each {@link setLocale}. */
  get locale(): ActiveLocale {
    return this.#locale;
  }

  /** Switches language at run time; the UI re-renders on `locale-change`. */
  setLocale(locale: LocaleOption): void {
    this.#locale = resolveLocale(locale);
    this.#events.emit('locale-change', this.#locale);
  }

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

  /**
   * Adds files in one state change; refused files are reported and shown in one toast. A batch
   * of more than `sizing.eagerUpTo` local files (or one added while sizes are still being read)
   * comes in with sizes pending: size restrictions and duplicate checks refuse files later, as
   * the sizes are read, and such files are then removed (`file-removed`, 'restriction-failed').
   * With recovery, a file that brings a ghost's bytes back revives the ghost instead of being
   * added (its id is not returned); in a large batch that is decided once its size is read,
   * and a file that turns out to be another one is added then.
   */
  addFiles(descriptors: Iterable<FileDescriptor>): string[] {
    return this.#intake.add(descriptors);
  }

  /** The headers of `FerryOptions.headers` as they are now (the function, if one, is called). */
  requestHeaders(): Promise<Record<string, string>> {
    return resolveHeaders(this.#options.headers);
  }

  /** Imports a link through the companion as a remote file; a failure is a code for the UI to word. */
  importLink(url: string): Promise<LinkImportResult> {
    return importLink(this, url);
  }

  removeFile(id: string): void {
    this.removeFiles([id]);
  }

  removeFiles(ids: readonly string[], reason: 'removed-by-user' | 'cancel-all' = 'removed-by-user'): void {
    const files = ids.map((id) => this.getFile(id)).filter((f): f is FerryFile => f !== undefined);
    if (files.length === 0) return;
    const why = reason === 'cancel-all' ? 'cancel' : 'remove';
    for (const f of files) {
      // A running upload is terminated by its uploader on abort; an idle one (paused) here.
      if (!this.#runner.isRunning(f.id) && f.state !== 'complete') {
        void this.#uploaderFor(f)
          ?.cancel?.(f, { companionUrl: this.companionUrl, headers: () => this.requestHeaders() })
          .catch(() => undefined);
      }
      this.#runner.abort(f.id, why);
      this.#index.remove(f);
      this.#connectivity.forget(f.id);
    }
    this.#dispatch({ type: 'remove', ids: files.map((f) => f.id) });
    for (const f of files) {
      this.#runner.drop(f.id, why);
      this.#readAhead.drop(f.id);
      this.#events.emit('file-removed', f, reason);
    }
  }

  /**
   * Uploads every waiting file; resolves when all have completed or failed. While sizes are
   * being read it waits for them first (files refused then are not uploaded), and so while
   * recovery compares re-added files with ghosts (one that is no ghost's is added then).
   */
  async upload(): Promise<UploadSummary> {
    if (this.recovery?.comparing) await this.recovery.compared();
    if (this.getState().sizesPending > 0 || this.#sizes.busy) await this.#sizes.drained();
    const rejection = checkMinFiles(this.getState().fileIds.length, this.#restrictions, this.i18n);
    if (rejection) {
      this.#events.emit('restriction-failed', undefined, rejection);
      this.info(rejection.message, 'error', 5000);
      return { successful: [], failed: [] };
    }
    const ids = this.getFiles()
      .filter((f) => f.state === 'waiting' && !f.ghost && !this.#runner.isPending(f.id))
      .map((f) => f.id);
    return this.#runner.batch(ids);
  }

  /** Pauses a running or waiting file, or resumes a paused one; returns the new paused flag. */
  pauseResume(id: string): boolean | undefined {
    const file = this.getFile(id);
    if (!file || file.ghost || this.#bundling()) return undefined;
    if (file.state === 'paused') {
      this.#resume(file);
      return false;
    }
    if (file.state !== 'uploading' && file.state !== 'waiting') return undefined;
    this.#pause(file, 'pause');
    return true;
  }

  pauseAll(): void {
    for (const f of this.getFiles()) if (f.state === 'uploading' || f.state === 'waiting') this.#pause(f, 'pause');
    this.#events.emit('pause-all');
  }

  resumeAll(): void {
    for (const f of this.getFiles()) if (f.state === 'paused' && !f.ghost) this.#resume(f);
    this.#events.emit('resume-all');
  }

  /** Retries one failed file; resolves when it has completed or failed again. */
  async retryUpload(id: string): Promise<UploadSummary> {
    const file = this.getFile(id);
    if (file?.state !== 'error') return { successful: [], failed: [] };
    this.#dispatch({ type: 'retry', ids: [id] });
    this.#events.emit('upload-retry', this.getFile(id) ?? file);
    return this.#runner.batch([id]);
  }

  /** Retries every failed file. */
  async retryAll(): Promise<UploadSummary> {
    const failed = this.getFiles().filter((f) => f.state === 'error');
    this.#events.emit('retry-all', failed);
    if (failed.length === 0) return { successful: [], failed: [] };
    const ids = failed.map((f) => f.id);
    this.#dispatch({ type: 'retry', ids });
    return this.#runner.batch(ids);
  }

  /** Stops every upload (terminating them on the server) and removes every file. */
  cancelAll(): void {
    this.removeFiles(this.getState().fileIds, 'cancel-all');
    this.#events.emit('cancel-all');
  }

  /** Merges `meta` into the global meta and into every file's meta. */
  setMeta(meta: Record<string, string>): void {
    this.#dispatch({ type: 'meta', meta });
  }

  setFileMeta(id: string, meta: Record<string, string>): void {
    this.#dispatch({ type: 'file-meta', id, meta });
  }

  /**
   * Replaces a file's bytes (an edited or compressed image) before it uploads, keeping its id and
   * meta; the name follows `name` or the new File's. False when the file is remote, paused, uploading or done.
   */
  setFileData(id: string, data: Blob, name?: string): boolean {
    const file = this.getFile(id);
    if (!file || file.isRemote || !['waiting', 'preprocessing', 'error'].includes(file.state)) return false;
    this.#index.remove(file);
    this.#dispatch({ type: 'data', id, data, name: name ?? ((data as Partial<File>).name || file.name) });
    const next = this.getFile(id);
    if (next) this.#index.add(next, fileKey(next));
    // The bytes read ahead were the old data's.
    this.#readAhead.drop(id);
    this.#readAhead.want([id]);
    return true;
  }

  /** Sets uploader bookkeeping or presentation fields (preview...) on a file. */
  setFileState(id: string, patch: FilePatch): void {
    this.#dispatch({ type: 'patch', id, patch });
  }

  setCapabilities(capabilities: Record<string, unknown>): void {
    this.#dispatch({ type: 'capabilities', capabilities });
  }

  addPreProcessor(fn: Processor): void {
    this.#processors.pre.add(fn);
  }
  removePreProcessor(fn: Processor): void {
    this.#processors.pre.delete(fn);
  }
  addPostProcessor(fn: Processor): void {
    this.#processors.post.add(fn);
  }
  removePostProcessor(fn: Processor): void {
    this.#processors.post.delete(fn);
  }

  /** Stops uploads, timers and listeners. */
  destroy(): void {
    this.#sizes.stop();
    this.#readAhead.stop();
    this.recovery?.stop();
    this.#runner.destroy();
    this.#assemblies?.stop();
    this.#connectivity.stop();
    this.#informer.destroy();
  }

  #dispatch(action: Action): void {
    const before = this.getState().totalProgress;
    this.#store.dispatch(action);
    const after = this.getState().totalProgress;
    if (after !== before) this.#events.emit('progress', after);
  }

  #uploaderFor(file: FerryFile): Uploader | undefined {
    if (file.isRemote) return this.#options.remoteUploader ?? this.#options.uploader;
    return this.#assemblies?.uploader ?? this.#options.uploader;
  }

  #bundling = (): boolean => !this.#assemblies && this.#options.uploader?.bundles?.() === true;
  /** What the runner needs from the engine. */
  #engineHost(): EngineHost {
    return {
      getFile: (id: string) => this.getFile(id),
      dispatch: (action: Action) => this.#dispatch(action),
      emit: this.emit,
      i18n: this.i18n,
      failed: (file: FerryFile, error: UploadError) => this.#failed(file, error),
      isOnline: () => this.#connectivity.isOnline(),
      uploaderFor: (file: FerryFile) => this.#uploaderFor(file),
      preprocess: (ids: string[]) => this.#process('preprocess', ids),
      postprocess: (ids: string[]) => this.#process('postprocess', ids),
      bundler: () => (this.#bundling() ? this.#options.uploader : undefined),
      ranBatch: () => this.#readAhead.resume(),
      hasPostprocessors: () => this.#processors.has('postprocess'),
      companionUrl: this.companionUrl,
      providerClient: (id: string, companionUrl?: string) => {
        const at = companionUrl ?? this.companionUrl;
        return at === undefined ? undefined : this.providers.client(id, at);
      },
      requestHeaders: () => this.requestHeaders(),
      bytesOf: (file: FerryFile) => this.#readAhead.bytesOf(file),
    };
  }

  /** What the intake of new files needs from the engine. */
  #intakeHost(eagerUpTo: number): IntakeHost {
    const options = this.#options;
    return {
      restrictions: this.#restrictions,
      index: this.#index,
      meta: () => this.getState().meta,
      get onBeforeFileAdded() {
        return options.onBeforeFileAdded;
      },
      i18n: this.i18n,
      sizing: () => this.#sizes.busy,
      eagerUpTo,
      claim: (descriptors, deferSizes) => (this.recovery ? this.recovery.claim(descriptors, deferSizes) : descriptors),
      refused: (rejected) => {
        for (const r of rejected) this.#events.emit('restriction-failed', r.descriptor, r.rejection);
        this.#refusals.tell(rejected.filter((r) => r.shown).map((r) => r.rejection));
      },
      added: (files, sources, deferSizes) => {
        this.#dispatch({ type: 'add', files });
        for (const file of files) this.#events.emit('file-added', file);
        this.#events.emit('files-added', files);
        if (deferSizes) this.#sizes.read(files, sources);
        if (this.#options.autoProceed) this.#scheduleAutoUpload();
      },
      admitted: (ids) => this.#readAhead.want(ids),
    };
  }

  /** What the size reader needs from the engine. */
  #sizingHost(): SizingHost {
    return {
      getFile: (id) => this.getFile(id),
      restrictions: this.#restrictions,
      index: this.#index,
      i18n: this.i18n,
      // Refused files never started (upload() waits for sizes): only the store forgets them.
      commit: (sizes, rejected) => {
        const gone = rejected.map((r) => this.getFile(r.id)).filter((f): f is FerryFile => f !== undefined);
        this.#dispatch({ type: 'sized', sizes, rejected: rejected.map((r) => r.id) });
        for (const r of rejected) this.#events.emit('restriction-failed', r.descriptor, r.rejection);
        for (const f of gone) this.#events.emit('file-removed', f, 'restriction-failed');
      },
      finished: (rejections) => {
        this.#refusals.tell(rejections);
        this.#readAhead.resume();
      },
    };
  }

  #process(phase: Phase, ids: string[]): Promise<void> {
    return this.#processors.run(phase, ids, {
      getFile: (id) => this.getFile(id),
      dispatch: (action) => this.#dispatch(action),
      completed: (p, file) => this.#events.emit(`${p}-complete`, file),
      failed: (file, error) => this.#failed(file, error),
    });
  }

  #pause(file: FerryFile, why: 'pause' | 'offline'): void {
    this.#runner.abort(file.id, why);
    this.#dispatch({ type: 'pause', ids: [file.id] });
    this.#events.emit('upload-pause', this.getFile(file.id) ?? file, true);
  }

  #resume(file: FerryFile): void {
    this.#connectivity.forget(file.id);
    this.#dispatch({ type: 'resume', ids: [file.id] });
    this.#events.emit('upload-pause', this.getFile(file.id) ?? file, false);
    this.#runner.resume(file.id);
  }

  #failed(file: FerryFile, error: UploadError): void {
    this.#events.emit('upload-error', file, error);
    this.info({ message: this.i18n('uploadError'), details: error.message }, 'error', 5000);
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
