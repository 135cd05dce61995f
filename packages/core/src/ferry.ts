/**
 * The engine a page talks to: holds the file store, runs uploads through an {@link Uploader},
 * and emits an event for every transition.
 */
import { Emitter } from './emitter.ts';
import { type Action, emptyProgress, initialState, reduce } from './reducer.ts';
import { Store } from './store.ts';
import type { FerryFile, FerryState, FileDescriptor, UploadError } from './types.ts';
import { type Uploader, UploaderError } from './uploader.ts';

export interface FerryEvents extends Record<string, unknown[]> {
  'file-added': [file: FerryFile];
  'files-added': [files: FerryFile[]];
  'file-removed': [file: FerryFile];
  upload: [fileIds: string[]];
  'upload-start': [file: FerryFile];
  'upload-progress': [file: FerryFile];
  'upload-success': [file: FerryFile];
  'upload-error': [file: FerryFile, error: UploadError];
  complete: [result: { successful: FerryFile[]; failed: FerryFile[] }];
}

export interface FerryOptions {
  uploader: Uploader;
}

let counter = 0;

function newId(): string {
  counter += 1;
  return `f${Date.now().toString(36)}-${counter.toString(36)}`;
}

export class Ferry {
  readonly #store = new Store<FerryState, Action>(initialState, reduce);
  readonly #events = new Emitter<FerryEvents>();
  readonly #uploader: Uploader;
  readonly #running = new Map<string, AbortController>();

  constructor(options: FerryOptions) {
    this.#uploader = options.uploader;
  }

  getState = (): FerryState => this.#store.getState();
  subscribe = this.#store.subscribe;
  on: Emitter<FerryEvents>['on'] = (event, handler) => this.#events.on(event, handler);
  off: Emitter<FerryEvents>['off'] = (event, handler) => this.#events.off(event, handler);

  getFile(id: string): FerryFile | undefined {
    return this.getState().files[id];
  }

  /** Adds files in one state change; returns their ids. */
  addFiles(descriptors: Iterable<FileDescriptor>): string[] {
    const files: FerryFile[] = [];
    for (const d of descriptors) {
      const name = d.name ?? (d.data instanceof File ? d.data.name : 'untitled');
      files.push({
        id: newId(),
        source: d.source ?? 'local',
        name,
        type: d.type ?? d.data.type ?? '',
        data: d.data,
        size: d.data.size,
        meta: { ...d.meta, name },
        state: 'waiting',
        progress: emptyProgress(d.data.size),
        error: null,
        isPaused: false,
        isRemote: false,
        relativePath: d.relativePath,
      });
    }
    this.#store.dispatch({ type: 'add', files });
    for (const file of files) this.#events.emit('file-added', file);
    if (files.length > 0) this.#events.emit('files-added', files);
    return files.map((f) => f.id);
  }

  removeFile(id: string): void {
    const file = this.getFile(id);
    if (!file) return;
    this.#running.get(id)?.abort();
    this.#store.dispatch({ type: 'remove', ids: [id] });
    this.#events.emit('file-removed', file);
  }

  /** Uploads every waiting file; resolves when all have finished. */
  async upload(): Promise<{ successful: FerryFile[]; failed: FerryFile[] }> {
    const ids = this.getState().fileIds.filter((id) => this.getFile(id)?.state === 'waiting');
    this.#events.emit('upload', ids);
    await Promise.all(ids.map((id) => this.#uploadOne(id)));
    const files = ids.map((id) => this.getFile(id)).filter((f): f is FerryFile => !!f);
    const result = {
      successful: files.filter((f) => f.state === 'complete'),
      failed: files.filter((f) => f.state === 'error'),
    };
    this.#events.emit('complete', result);
    return result;
  }

  async #uploadOne(id: string): Promise<void> {
    const start = this.getFile(id);
    if (!start) return;
    const controller = new AbortController();
    this.#running.set(id, controller);
    this.#store.dispatch({ type: 'state', id, state: 'uploading' });
    this.#emitFile('upload-start', id);
    try {
      const result = await this.#uploader.upload(start, {
        signal: controller.signal,
        onProgress: (bytesUploaded, bytesTotal) => {
          this.#store.dispatch({ type: 'progress', id, bytesUploaded, bytesTotal });
          this.#emitFile('upload-progress', id);
        },
        patchFile: (patch) => this.#store.dispatch({ type: 'patch', id, patch }),
      });
      if (controller.signal.aborted) return;
      this.#store.dispatch({ type: 'success', id, uploadURL: result.uploadURL });
      this.#emitFile('upload-success', id);
    } catch (cause) {
      if (controller.signal.aborted) return;
      const error: UploadError =
        cause instanceof UploaderError
          ? { message: cause.message, status: cause.status, retryable: cause.retryable }
          : { message: String((cause as Error)?.message ?? cause), retryable: true };
      this.#store.dispatch({ type: 'error', id, error });
      const file = this.getFile(id);
      if (file) this.#events.emit('upload-error', file, error);
    } finally {
      this.#running.delete(id);
    }
  }

  #emitFile(event: 'upload-start' | 'upload-progress' | 'upload-success', id: string): void {
    const file = this.getFile(id);
    if (file) this.#events.emit(event, file);
  }
}
