/**
 * What recovery needs from the engine, built from the engine's public API and the few private
 * parts `ferry.ts` hands over: restoring puts records ahead of files added meanwhile, and
 * reviving a ghost gives it back its bytes in the store and the duplicate index.
 */
import type { Ferry } from '../ferry.ts';
import { type FileIndex, fileKey } from '../files.ts';
import type { Action } from '../reducer.ts';
import type { SliceOptions } from '../slicer.ts';
import type { FerryFile, FileDescriptor } from '../types.ts';
import type { Uploader } from '../uploader.ts';
import type { Revived } from './ghosts.ts';
import type { RecoveryHost } from './recovery.ts';

/** The engine's private parts recovery works on. */
export interface EngineParts {
  index: FileIndex;
  dispatch(action: Action): void;
  /** Uploads these files as one batch. */
  run(ids: string[]): void;
  uploaderFor(file: FerryFile): Uploader | undefined;
  /** Admits files as new (past recovery's claim). */
  add(descriptors: FileDescriptor[]): void;
  slicing: SliceOptions | undefined;
}

export function recoveryHost(engine: Ferry, parts: EngineParts): RecoveryHost {
  return {
    scope: engine.id,
    getState: engine.getState,
    subscribe: (listener) => engine.subscribe((state) => listener(state)),
    restore: (files) => {
      for (const f of files) parts.index.add(f, fileKey(f));
      // Ahead of files added while the records were read: the list is in add order.
      parts.dispatch({ type: 'add', files, first: true });
    },
    run: (ids) => parts.run(ids),
    revive: (revivals) => {
      const resume = revive(revivals, { getFile: (id) => engine.getFile(id), ...parts });
      if (resume.length > 0) parts.run(resume);
    },
    uploaded: async (file, signal) =>
      parts.uploaderFor(file)?.uploaded?.(file, {
        companionUrl: engine.companionUrl,
        headers: () => engine.requestHeaders(),
        signal,
      }),
    add: (descriptors) => parts.add(descriptors),
    slicing: parts.slicing,
    removeFiles: (ids) => engine.removeFiles(ids),
    info: (message, type, duration) => engine.info(message, type, duration),
    i18n: engine.i18n,
  };
}

/** The engine's parts reviving ghosts changes. */
export interface ReviveTarget {
  getFile(id: string): FerryFile | undefined;
  index: FileIndex;
  dispatch(action: Action): void;
}

/**
 * Gives ghosts their bytes back in the engine, in one state change. A ghost was indexed for
 * duplicates without its bytes (its size maybe unknown): it is indexed again under the
 * fingerprint of the bytes it got. Those to run that are paused are resumed; their ids.
 */
export function revive(revivals: readonly Revived[], engine: ReviveTarget): string[] {
  for (const r of revivals) {
    const ghost = engine.getFile(r.id);
    if (ghost) engine.index.remove(ghost);
  }
  engine.dispatch({ type: 'revive', files: [...revivals] });
  const resume: string[] = [];
  for (const r of revivals) {
    const revived = engine.getFile(r.id);
    if (!revived) continue;
    engine.index.add(revived, fileKey(revived));
    if (r.run && revived.state === 'paused') resume.push(r.id);
  }
  if (resume.length > 0) engine.dispatch({ type: 'resume', ids: resume });
  return resume;
}
