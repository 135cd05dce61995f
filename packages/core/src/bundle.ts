/**
 * Bundle mode: every file of an upload run goes in one request (XHR `bundle: true`). The bundle
 * takes one limiter slot; progress is spread over the files by size; one failure fails them all.
 */
import type { Emitter } from './emitter.ts';
import type { FerryEvents } from './events.ts';
import type { Limiter } from './limiter.ts';
import type { Action } from './reducer.ts';
import type { FerryFile, UploadError } from './types.ts';
import { type BundleContext, toUploadError, type Uploader } from './uploader.ts';

export interface BundleHost {
  getFile(id: string): FerryFile | undefined;
  dispatch(action: Action): void;
  emit: Emitter<FerryEvents>['emit'];
  i18n(key: string, vars?: Record<string, string | number>): string;
  failed(file: FerryFile, error: UploadError): void;
  isOnline(): boolean;
  limiter: Limiter;
  postprocess(ids: string[]): Promise<void>;
  hasPostprocessors(): boolean;
}

export async function runBundle(uploader: Uploader, ids: string[], host: BundleHost): Promise<void> {
  const upload = uploader.uploadBundle;
  if (!upload || ids.length === 0) return;
  const controller = new AbortController();
  const release = await host.limiter.acquire(controller.signal);
  try {
    host.dispatch({ type: 'start', ids, at: Date.now() });
    for (const id of ids) {
      const file = host.getFile(id);
      if (file) host.emit('upload-start', file);
    }
    const files = ids.map((id) => host.getFile(id)).filter((f): f is FerryFile => f !== undefined);
    const sizes = files.map((f) => f.size ?? 0);
    const context: BundleContext = {
      signal: controller.signal,
      onProgress: (sent, total) => {
        // Spread bytes over the files in order: earlier parts of the body are earlier files.
        let left = sent;
        const updates = files.map((f, i) => {
          const size = sizes[i] ?? 0;
          const done = Math.max(0, Math.min(size, left));
          left -= size;
          return { id: f.id, bytesUploaded: done, bytesTotal: size };
        });
        host.dispatch({ type: 'progress', updates });
        void total;
      },
      patchFile: (id, patch) => host.dispatch({ type: 'patch', id, patch }),
      reason: () => undefined,
      isOnline: host.isOnline,
      i18n: host.i18n,
    };
    let results: Awaited<ReturnType<typeof upload>>;
    try {
      results = await upload.call(uploader, files, context);
    } catch (cause) {
      const error = toUploadError(cause);
      for (const f of files) {
        host.dispatch({ type: 'error', id: f.id, error });
        const failed = host.getFile(f.id);
        if (failed) host.failed(failed, error);
      }
      return;
    }
    for (const [i, f] of files.entries()) {
      const response = results[i] ?? results[0] ?? {};
      host.dispatch({ type: 'patch', id: f.id, patch: { uploadURL: response.uploadURL, response } });
      host.dispatch({ type: 'set-state', ids: [f.id], state: 'postprocessing' });
      // Without postprocessors the file is complete when upload-success is heard.
      if (!host.hasPostprocessors()) host.dispatch({ type: 'success', id: f.id, response });
      const done = host.getFile(f.id);
      if (done) host.emit('upload-success', done, response);
    }
    await host.postprocess(files.map((f) => f.id));
    for (const [i, f] of files.entries()) {
      if (host.getFile(f.id)?.state === 'postprocessing') {
        host.dispatch({ type: 'success', id: f.id, response: results[i] ?? results[0] ?? {} });
      }
    }
  } finally {
    release();
  }
}
