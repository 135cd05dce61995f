/**
 * Pre- and postprocessors: hooks that run over the files of an upload run before the upload
 * (state `preprocessing`) and after it (state `postprocessing`). A processor that throws puts
 * its files in error. Their progress ('Preparing upload...') arrives as events.
 */
import type { Action } from './reducer.ts';
import type { FerryFile, UploadError } from './types.ts';

/** A pre- or postprocessor: runs over the ids of one upload run. */
export type Processor = (fileIds: string[]) => Promise<void> | void;

export type Phase = 'preprocess' | 'postprocess';

export interface ProcessorHost {
  getFile(id: string): FerryFile | undefined;
  dispatch(action: Action): void;
  completed(phase: Phase, file: FerryFile): void;
  failed(file: FerryFile, error: UploadError): void;
}

export class Processors {
  readonly pre = new Set<Processor>();
  readonly post = new Set<Processor>();

  has(phase: Phase): boolean {
    return (phase === 'preprocess' ? this.pre : this.post).size > 0;
  }

  async run(phase: Phase, ids: string[], host: ProcessorHost): Promise<void> {
    const processors = phase === 'preprocess' ? this.pre : this.post;
    if (processors.size === 0) return;
    if (phase === 'preprocess') host.dispatch({ type: 'preprocess', ids });
    try {
      for (const fn of processors) await fn(ids);
    } catch (cause) {
      const error = { message: cause instanceof Error ? cause.message : String(cause), retryable: true };
      for (const id of ids) {
        host.dispatch({ type: 'error', id, error });
        const file = host.getFile(id);
        if (file) host.failed(file, error);
      }
      return;
    }
    for (const id of ids) {
      host.dispatch({ type: 'processing', id, phase, progress: undefined });
      const file = host.getFile(id);
      if (file) host.completed(phase, file);
    }
    if (phase === 'preprocess') {
      host.dispatch({ type: 'ready', ids });
    }
  }
}
