/**
 * Every change to the file state goes through this one reducer, over a typed action union.
 * Functions here are pure; events are emitted by the caller from the action that was applied.
 */
import type { FerryFile, FerryState, FileState, Progress, UploadError } from './types.ts';

export type Action =
  | { type: 'add'; files: FerryFile[] }
  | { type: 'remove'; ids: string[] }
  | { type: 'state'; id: string; state: FileState }
  | { type: 'progress'; id: string; bytesUploaded: number; bytesTotal: number | null }
  | { type: 'success'; id: string; uploadURL?: string }
  | { type: 'error'; id: string; error: UploadError }
  | { type: 'patch'; id: string; patch: Partial<Pick<FerryFile, 'tus' | 'meta' | 'preview'>> };

export const initialState: FerryState = { files: {}, fileIds: [], totalProgress: 0 };

export function emptyProgress(bytesTotal: number | null): Progress {
  return {
    bytesUploaded: 0,
    bytesTotal,
    percentage: 0,
    uploadStarted: null,
    uploadComplete: false,
  };
}

export function reduce(state: FerryState, action: Action): FerryState {
  switch (action.type) {
    case 'add': {
      if (action.files.length === 0) return state;
      const files = { ...state.files };
      const fileIds = [...state.fileIds];
      for (const file of action.files) {
        files[file.id] = file;
        fileIds.push(file.id);
      }
      return withTotal({ ...state, files, fileIds });
    }
    case 'remove': {
      const gone = new Set(action.ids.filter((id) => id in state.files));
      if (gone.size === 0) return state;
      const files = { ...state.files };
      for (const id of gone) delete files[id];
      return withTotal({ ...state, files, fileIds: state.fileIds.filter((id) => !gone.has(id)) });
    }
    case 'state':
      return update(state, action.id, (f) => ({
        ...f,
        state: action.state,
        isPaused: action.state === 'paused',
        error: action.state === 'error' ? f.error : null,
        progress:
          action.state === 'uploading' && f.progress.uploadStarted === null
            ? { ...f.progress, uploadStarted: Date.now() }
            : f.progress,
      }));
    case 'progress':
      return update(state, action.id, (f) => {
        const total = action.bytesTotal ?? f.progress.bytesTotal;
        return {
          ...f,
          progress: {
            ...f.progress,
            bytesUploaded: action.bytesUploaded,
            bytesTotal: total,
            percentage: percent(action.bytesUploaded, total),
          },
        };
      });
    case 'success':
      return update(state, action.id, (f) => {
        const total = f.progress.bytesTotal ?? f.progress.bytesUploaded;
        return {
          ...f,
          state: 'complete',
          isPaused: false,
          error: null,
          uploadURL: action.uploadURL,
          progress: {
            ...f.progress,
            bytesUploaded: total,
            bytesTotal: total,
            percentage: 100,
            uploadComplete: true,
          },
        };
      });
    case 'error':
      return update(state, action.id, (f) => ({
        ...f,
        state: 'error',
        isPaused: false,
        error: action.error,
      }));
    case 'patch':
      return update(state, action.id, (f) => ({ ...f, ...action.patch }));
  }
}

function update(state: FerryState, id: string, change: (file: FerryFile) => FerryFile): FerryState {
  const file = state.files[id];
  if (!file) return state;
  return withTotal({ ...state, files: { ...state.files, [id]: change(file) } });
}

function percent(done: number, total: number | null): number {
  if (!total) return 0;
  return Math.min(100, Math.round((done / total) * 1000) / 10);
}

/** Total progress over files that have started, weighted by size. */
function withTotal(state: FerryState): FerryState {
  let done = 0;
  let total = 0;
  for (const id of state.fileIds) {
    const p = state.files[id]?.progress;
    if (!p || p.uploadStarted === null || p.bytesTotal === null) continue;
    done += p.bytesUploaded;
    total += p.bytesTotal;
  }
  const totalProgress = total === 0 ? 0 : Math.round((done / total) * 100);
  return totalProgress === state.totalProgress ? state : { ...state, totalProgress };
}
