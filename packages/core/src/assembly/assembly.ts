/**
 * The `assembly` option: files go through a Transloadit-compatible processing service (Ferry's
 * `ferry serve --assembly-key`, or Transloadit). Plugged into the engine through its public seams:
 * a preprocessor creates one Assembly per batch with the application's signed params, the
 * uploader sends each local file with tus to the Assembly's `tus_url` with the metadata keys that
 * tie it to the Assembly, and a postprocessor holds each file in `postprocessing` while the
 * Assembly executes, then attaches its step results (`file.results`) or fails it with the
 * service's message. Removing every file of a running Assembly stops the polling and cancels it.
 */
import type { FerryEvents } from '../events.ts';
import type { FerryFile, ProcessingProgress } from '../types.ts';
import type { Uploader } from '../uploader.ts';
import { UploaderError } from '../uploader.ts';
import { type TusOptions, TusUploader } from '../uploaders/tus.ts';
import {
  type AssemblyParams,
  cancelAssembly,
  createAssembly,
  DEFAULT_ASSEMBLY_TIMEOUT,
  DEFAULT_POLL_DELAYS,
  type FetchLike,
  watchAssembly,
} from './client.ts';
import { type AssemblyStatus, executionProgress, failureOf, resultsOf, statusUrl, uploadOf } from './status.ts';

export interface AssemblyOptions {
  /**
   * Called once per batch: the signed params from the application's own endpoint (`params` the
   * exact JSON string signed, `signature` when the service requires one).
   */
  params: () => AssemblyParams | Promise<AssemblyParams>;
  /** The service's origin (the API sits at its root); default the companion's origin, else the page's. */
  service?: string;
  /** Options of the tus uploads into the Assembly (its `tus_url` is the endpoint). */
  tus?: Omit<TusOptions, 'endpoint'>;
  /** Waits between status polls in ms, the last repeating (default 0.5 s rising to 5 s). */
  pollDelays?: number[];
  /** Processing deadline per Assembly in ms (default 30 minutes). */
  timeout?: number;
  /** Requests go through this (default the global `fetch`). */
  fetch?: FetchLike;
  /** Makes the uploader for an Assembly's `tus_url` (default a {@link TusUploader}; tests pass a fake). */
  uploaderFor?: (tusUrl: string) => Uploader;
}

/** What the plug-in needs from the engine (its public API). */
export interface AssemblyHost {
  readonly companionUrl: string | undefined;
  getFile(id: string): FerryFile | undefined;
  setFileState(id: string, patch: { tus?: FerryFile['tus']; results?: FerryFile['results'] }): void;
  addPreProcessor(fn: (ids: string[]) => Promise<void>): void;
  addPostProcessor(fn: (ids: string[]) => Promise<void>): void;
  emit(event: 'postprocess-progress', file: FerryFile, progress: ProcessingProgress): void;
  on<K extends 'file-removed'>(event: K, handler: (...args: FerryEvents[K]) => void): unknown;
  i18n(key: string, vars?: Record<string, string | number>): string;
}

/** One Assembly of one batch. */
interface Running {
  /** Its status URL and tus endpoint, from the creation answer (polls need not repeat them). */
  url: string;
  tusUrl: string;
  /** The latest status seen. */
  status: AssemblyStatus;
  files: Set<string>;
  controller: AbortController;
  watch?: Promise<AssemblyStatus>;
  done: boolean;
}

export class Assemblies {
  readonly #host: AssemblyHost;
  readonly #options: AssemblyOptions;
  readonly #fetch: FetchLike;
  readonly #byFile = new Map<string, Running>();
  readonly #uploaders = new Map<string, Uploader>();
  /** The uploader the engine uses for local files. */
  readonly uploader: Uploader;

  constructor(host: AssemblyHost, options: AssemblyOptions) {
    this.#host = host;
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.uploader = {
      upload: (file, context) => this.#upload(file, context),
      cancel: async (file, context) => {
        const running = this.#byFile.get(file.id);
        if (running) await this.#uploaderAt(running.tusUrl).cancel?.(file, context);
      },
    };
    host.addPreProcessor((ids) => this.#create(ids));
    host.addPostProcessor((ids) => this.#process(ids));
    host.on('file-removed', (file) => this.#forget(file.id));
  }

  /** Stops every poll (the engine is destroyed). */
  stop(): void {
    for (const running of new Set(this.#byFile.values()))
      running.controller.abort(new DOMException('stop', 'AbortError'));
    this.#byFile.clear();
  }

  #service(): string {
    if (this.#options.service) return this.#options.service;
    const companion = this.#host.companionUrl;
    const page = globalThis.location?.href;
    return new URL(companion ?? '/', page).origin;
  }

  #uploaderAt(tusUrl: string): Uploader {
    let uploader = this.#uploaders.get(tusUrl);
    if (!uploader) {
      uploader = this.#options.uploaderFor?.(tusUrl) ?? new TusUploader({ ...this.#options.tus, endpoint: tusUrl });
      this.#uploaders.set(tusUrl, uploader);
    }
    return uploader;
  }

  /** Preprocessor: one Assembly for the batch's local files (remote ones travel without one). */
  async #create(ids: string[]): Promise<void> {
    const local = ids.filter((id) => {
      const file = this.#host.getFile(id);
      return file !== undefined && !file.isRemote;
    });
    if (local.length === 0) return;
    const signed = await this.#options.params();
    const status = await createAssembly(this.#fetch, this.#service(), signed, local.length);
    const running: Running = {
      url: statusUrl(status) ?? '',
      tusUrl: status.tus_url ?? '',
      status,
      files: new Set(local),
      controller: new AbortController(),
      done: false,
    };
    for (const id of local) {
      this.#byFile.get(id)?.files.delete(id);
      this.#byFile.set(id, running);
      // A retried file goes into a new Assembly: its earlier tus upload belongs to the old one.
      this.#host.setFileState(id, { tus: undefined, results: undefined });
    }
  }

  /** Uploader: the file with tus to its Assembly, tied to it by Upload-Metadata. */
  #upload(file: FerryFile, context: Parameters<Uploader['upload']>[1]) {
    const running = this.#byFile.get(file.id);
    if (!running) {
      return Promise.reject(new UploaderError('This file has no assembly to upload into', { retryable: true }));
    }
    const meta = { ...file.meta, assembly_url: running.url, fieldname: 'file', filename: file.name };
    return this.#uploaderAt(running.tusUrl).upload({ ...file, meta }, context);
  }

  /** Postprocessor: waits for the Assembly, then results on the file or its error. */
  async #process(ids: string[]): Promise<void> {
    for (const id of ids) {
      const running = this.#byFile.get(id);
      if (!running) continue;
      let final: AssemblyStatus;
      try {
        final = await this.#watch(running);
      } catch (cause) {
        if (running.controller.signal.aborted) return; // cancelled: the files are gone
        throw cause;
      }
      const failure = failureOf(final);
      if (failure !== undefined) throw new Error(failure);
      const file = this.#host.getFile(id);
      if (!file) continue;
      const upload = uploadOf(final, {
        uploadURL: file.uploadURL ?? file.tus?.uploadUrl,
        name: file.name,
        size: file.size,
      });
      this.#host.setFileState(id, { results: upload ? resultsOf(final, upload) : {} });
      running.files.delete(id);
      if (this.#byFile.get(id) === running) this.#byFile.delete(id);
    }
  }

  /** One poll per Assembly, shared by its files; progress goes to those still processing. */
  #watch(running: Running): Promise<AssemblyStatus> {
    running.watch ??= watchAssembly(this.#fetch, running.url, {
      delays: this.#options.pollDelays ?? DEFAULT_POLL_DELAYS,
      timeout: this.#options.timeout ?? DEFAULT_ASSEMBLY_TIMEOUT,
      maxFailures: 3,
      signal: running.controller.signal,
      onStatus: (status) => {
        running.status = status;
        this.#progress(running);
      },
    }).finally(() => {
      running.done = true;
    });
    this.#progress(running);
    return running.watch;
  }

  #progress(running: Running): void {
    const value = running.status.ok === 'ASSEMBLY_EXECUTING' ? executionProgress(running.status) : undefined;
    const progress: ProcessingProgress =
      value === undefined
        ? { mode: 'indeterminate', message: this.#host.i18n('postprocessing') }
        : { mode: 'determinate', message: this.#host.i18n('postprocessing'), value };
    for (const id of running.files) {
      const file = this.#host.getFile(id);
      if (file?.state === 'postprocessing') this.#host.emit('postprocess-progress', file, progress);
    }
  }

  /** A file left: when it was the Assembly's last, polling stops and the Assembly is cancelled. */
  #forget(id: string): void {
    const running = this.#byFile.get(id);
    if (!running) return;
    this.#byFile.delete(id);
    running.files.delete(id);
    if (running.files.size > 0 || running.done) return;
    running.controller.abort(new DOMException('cancel', 'AbortError'));
    cancelAssembly(this.#fetch, running.url).catch(() => undefined);
  }
}
