/**
 * Every change to the state goes through this one reducer, over a typed action union. Functions
 * here are pure (times come in on the action); events are emitted by the caller.
 *
 * Cost: adding k files copies the file map once (one state change per batch); a change to one
 * file copies the map once; progress arrives batched (one action per throttle window); totals
 * and the counts by state (and of ghosts) are kept incrementally, so no action walks every file.
 * Changes to and removals of given files note which files they changed (`file-changes.ts`), so
 * the store's followers need not compare every file either.
 */
import { noteChanged } from './file-changes.ts';
import type {
  FerryFile,
  FerryState,
  FileState,
  InfoMessage,
  ProcessingProgress,
  Progress,
  UploadError,
  UploadResponse,
} from './types.ts';

/** Fields other modules may set on a file directly (uploader bookkeeping, preview...). */
export type FilePatch = Partial<
  Pick<
    FerryFile,
    | 'tus'
    | 's3Multipart'
    | 'serverToken'
    | 'remote'
    | 'preview'
    | 'meta'
    | 'name'
    | 'type'
    | 'uploadURL'
    | 'response'
    | 'results'
    | 'data'
    | 'ghost'
    | 'waiting'
  >
>;

export interface ProgressUpdate {
  id: string;
  bytesUploaded: number;
  bytesTotal: number | null;
}

/** The named state changes: preprocess, ready (preprocessed), pause, resume, postprocess. */
export type Move = 'preprocess' | 'ready' | 'pause' | 'resume' | 'postprocess';

/**
 * The named transitions of ARCHITECTURE's state diagram, `[from, to]`: a file moves only from one
 * of the `from` states; others are left as they are. Processors are not abortable, so a pre- or
 * postprocessing file cannot be paused.
 */
const moves: Record<Move, [FileState[], FileState]> = {
  preprocess: [['waiting'], 'preprocessing'],
  ready: [['preprocessing'], 'waiting'],
  pause: [['waiting', 'uploading'], 'paused'],
  resume: [['paused'], 'waiting'],
  postprocess: [['uploading'], 'postprocessing'],
};

/** A pending size that was read (see `sizing.ts`). */
export interface SizeUpdate {
  id: string;
  size: number;
}

/** A ghost's bytes, found again (see `recovery/recovery.ts`), with their size as read. */
export interface Revival {
  id: string;
  data: Blob;
  size: number;
}

export type Action =
  /** `first`: ahead of the files already listed (restored files, added before this page's). */
  | { type: 'add'; files: FerryFile[]; first?: boolean }
  /** One slice of pending sizes: the sizes read, and the files a size check refused. */
  | { type: 'sized'; sizes: SizeUpdate[]; rejected: string[] }
  | { type: 'remove'; ids: string[] }
  | { type: Move; ids: string[] }
  | { type: 'start'; ids: string[]; at: number }
  | { type: 'progress'; updates: ProgressUpdate[] }
  | { type: 'processing'; id: string; phase: 'preprocess' | 'postprocess'; progress: ProcessingProgress | undefined }
  | { type: 'success'; id: string; response: UploadResponse }
  | { type: 'error'; id: string; error: UploadError }
  | { type: 'retry'; ids: string[] }
  | { type: 'patch'; id: string; patch: FilePatch }
  /** Ghosts get their bytes back; one saved before its size was read gets that size too. */
  | { type: 'revive'; files: Revival[] }
  | { type: 'file-meta'; id: string; meta: Record<string, string> }
  | { type: 'data'; id: string; data: Blob; name: string }
  | { type: 'meta'; meta: Record<string, string> }
  | { type: 'info-show'; info: InfoMessage }
  | { type: 'info-hide'; id: string }
  | { type: 'offline'; isOffline: boolean }
  | { type: 'capabilities'; capabilities: Record<string, unknown> };

/** No file in any state. */
export const noCounts: Readonly<Record<FileState, number>> = {
  waiting: 0,
  preprocessing: 0,
  uploading: 0,
  postprocessing: 0,
  paused: 0,
  complete: 0,
  error: 0,
};

export const initialState: FerryState = {
  files: {},
  fileIds: [],
  totalProgress: 0,
  totals: { bytesUploaded: 0, bytesTotal: 0 },
  sizesPending: 0,
  counts: noCounts,
  ghosts: 0,
  info: [],
  isOffline: false,
  meta: {},
};

export function emptyProgress(bytesTotal: number | null): Progress {
  return { bytesUploaded: 0, bytesTotal, percentage: 0, uploadStarted: null, uploadComplete: false };
}

export function reduce(state: FerryState, action: Action): FerryState {
  switch (action.type) {
    case 'add': {
      if (action.files.length === 0) return state;
      const files = copyFiles(state.files);
      const fileIds = action.first ? [] : state.fileIds.slice();
      let totals = state.totals;
      let sizesPending = state.sizesPending;
      const counts = { ...state.counts };
      let ghosts = state.ghosts;
      for (const file of action.files) {
        files[file.id] = file;
        fileIds.push(file.id);
        counts[file.state] += 1;
        if (file.ghost) ghosts += 1;
        if (file.sizePending) sizesPending += 1;
        // New files rarely count towards progress (not started): skip the bookkeeping then.
        if (file.progress.uploadStarted !== null) totals = adjust(totals, undefined, file);
      }
      if (action.first) for (const id of state.fileIds) fileIds.push(id);
      return withTotals({ ...state, files, fileIds, sizesPending, counts, ghosts }, totals);
    }
    case 'sized': {
      const sizes = new Map(action.sizes.map((u) => [u.id, u.size]));
      const sized = updateMany(state, [...sizes.keys()], (f) => {
        const size = sizes.get(f.id);
        if (size === undefined || !f.sizePending) return f;
        const { sizePending: _, ...rest } = f;
        return { ...rest, size, progress: { ...f.progress, bytesTotal: size } };
      });
      const settled = countPending(
        state,
        action.sizes.map((u) => u.id),
      );
      const next = { ...sized, sizesPending: state.sizesPending - settled };
      return action.rejected.length > 0 ? reduce(next, { type: 'remove', ids: action.rejected }) : next;
    }
    case 'remove': {
      const files = copyFiles(state.files);
      let totals = state.totals;
      let sizesPending = state.sizesPending;
      const counts = { ...state.counts };
      let ghosts = state.ghosts;
      let removed = 0;
      for (const id of action.ids) {
        const file = files[id];
        if (!file) continue;
        totals = adjust(totals, file, undefined);
        counts[file.state] -= 1;
        if (file.ghost) ghosts -= 1;
        if (file.sizePending) sizesPending -= 1;
        delete files[id];
        removed += 1;
      }
      if (removed === 0) return state;
      noteChanged(files, state.files, action.ids);
      const gone = new Set(action.ids);
      return withTotals(
        { ...state, files, fileIds: state.fileIds.filter((id) => !gone.has(id)), sizesPending, counts, ghosts },
        totals,
      );
    }
    case 'preprocess':
    case 'ready':
    case 'pause':
    case 'resume':
    case 'postprocess': {
      const [from, to] = moves[action.type];
      return updateMany(state, action.ids, (f) =>
        from.includes(f.state) ? { ...f, state: to, isPaused: to === 'paused', error: null } : f,
      );
    }
    case 'start':
      return updateMany(state, action.ids, (f) => ({
        ...f,
        state: 'uploading',
        isPaused: false,
        error: null,
        progress: { ...f.progress, uploadStarted: f.progress.uploadStarted ?? action.at, preprocess: undefined },
      }));
    case 'progress': {
      // Several files in one action: the throttle flushes every pending update at once.
      const byId = new Map(action.updates.map((u) => [u.id, u]));
      return updateMany(state, [...byId.keys()], (f) => {
        const u = byId.get(f.id);
        if (!u || f.state !== 'uploading') return f;
        const total = u.bytesTotal ?? f.progress.bytesTotal;
        return {
          ...f,
          progress: {
            ...f.progress,
            bytesUploaded: u.bytesUploaded,
            bytesTotal: total,
            percentage: percent(u.bytesUploaded, total),
          },
        };
      });
    }
    case 'processing':
      return updateMany(state, [action.id], (f) => ({
        ...f,
        progress: { ...f.progress, [action.phase]: action.progress },
      }));
    case 'success':
      return updateMany(state, [action.id], (f) => completed(f, action.response));
    case 'error':
      return updateMany(state, [action.id], (f) => ({ ...f, state: 'error', isPaused: false, error: action.error }));
    case 'retry':
      return updateMany(state, action.ids, (f) =>
        f.state === 'error' ? { ...f, state: 'waiting', isPaused: false, error: null } : f,
      );
    case 'patch':
      return updateMany(state, [action.id], (f) => ({ ...f, ...action.patch }));
    case 'revive': {
      const byId = new Map(action.files.map((r) => [r.id, r]));
      return updateMany(state, [...byId.keys()], (f) => {
        const r = byId.get(f.id);
        if (!r) return f;
        const progress = { ...f.progress, bytesTotal: f.progress.bytesTotal ?? r.size };
        return { ...f, data: r.data, size: r.size, ghost: false, progress };
      });
    }
    case 'data': {
      // New bytes (an edited or compressed image): a fresh upload, meta kept. A name the person
      // typed in the card stays; one that followed the file name follows the new one. The new
      // bytes' size is read here, so a pending size is pending no more.
      const settled = countPending(state, [action.id]);
      const next = updateMany(state, [action.id], (f) => {
        const type = action.data.type || f.type;
        const name = f.meta.name === f.name ? action.name : (f.meta.name ?? action.name);
        const { sizePending: _, ...rest } = f;
        return {
          ...rest,
          data: action.data,
          size: action.data.size,
          name: action.name,
          type,
          meta: { ...f.meta, name, type },
          progress: { ...emptyProgress(action.data.size), preprocess: f.progress.preprocess },
          tus: undefined,
          s3Multipart: undefined,
        };
      });
      return settled === 0 ? next : { ...next, sizesPending: state.sizesPending - settled };
    }
    case 'file-meta':
      return updateMany(state, [action.id], (f) => ({ ...f, meta: { ...f.meta, ...action.meta } }));
    case 'meta': {
      // Global meta goes into every file's meta too (uploaders read only the file's).
      const withMeta = updateMany(state, state.fileIds, (f) => ({ ...f, meta: { ...f.meta, ...action.meta } }));
      return { ...withMeta, meta: { ...state.meta, ...action.meta } };
    }
    case 'info-show': {
      // A message shown again under its id (an updated count) keeps its place in the queue.
      const at = state.info.findIndex((i) => i.id === action.info.id);
      if (at === -1) return { ...state, info: [...state.info, action.info] };
      return { ...state, info: state.info.map((i, n) => (n === at ? action.info : i)) };
    }
    case 'info-hide': {
      const info = state.info.filter((i) => i.id !== action.id);
      return info.length === state.info.length ? state : { ...state, info };
    }
    case 'offline':
      return state.isOffline === action.isOffline ? state : { ...state, isOffline: action.isOffline };
    case 'capabilities':
      return { ...state, capabilities: { ...state.capabilities, ...action.capabilities } };
  }
}

/** `file` as its upload's success leaves it (also a restored file the server says is complete). */
export function completed(file: FerryFile, response: UploadResponse): FerryFile {
  const total = file.progress.bytesTotal ?? file.progress.bytesUploaded;
  return {
    ...file,
    state: 'complete',
    isPaused: false,
    error: null,
    uploadURL: response.uploadURL ?? file.uploadURL,
    response,
    progress: {
      ...file.progress,
      uploadStarted: file.progress.uploadStarted ?? 0,
      bytesUploaded: total,
      bytesTotal: total,
      percentage: 100,
      uploadComplete: true,
      postprocess: undefined,
    },
  };
}

/**
 * A copy of the file map to change. Past about a thousand files the map is a dictionary, and
 * Chromium copies one by a loop in half the time a spread takes (5 ms against 10 for 10,000
 * files): every size commit of a large pick copies it.
 */
function copyFiles(files: FerryState['files']): Record<string, FerryFile> {
  const copy: Record<string, FerryFile> = {};
  for (const id in files) copy[id] = files[id] as FerryFile;
  return copy;
}

/** How many of these files have their size pending. */
function countPending(state: FerryState, ids: readonly string[]): number {
  let n = 0;
  for (const id of ids) if (state.files[id]?.sizePending) n += 1;
  return n;
}

/** Applies `change` to the given files with one copy of the map; unchanged files keep identity. */
function updateMany(state: FerryState, ids: readonly string[], change: (file: FerryFile) => FerryFile): FerryState {
  let files: Record<string, FerryFile> | undefined;
  let counts: Record<FileState, number> | undefined;
  let ghosts = state.ghosts;
  let totals = state.totals;
  const changed: string[] = [];
  for (const id of ids) {
    const file = (files ?? state.files)[id];
    if (!file) continue;
    const next = change(file);
    if (next === file) continue;
    files ??= copyFiles(state.files);
    files[id] = next;
    changed.push(id);
    totals = adjust(totals, file, next);
    if (next.state !== file.state) {
      counts ??= { ...state.counts };
      counts[file.state] -= 1;
      counts[next.state] += 1;
    }
    if (!next.ghost !== !file.ghost) ghosts += next.ghost ? 1 : -1;
  }
  if (!files) return state;
  noteChanged(files, state.files, changed);
  return withTotals({ ...state, files, counts: counts ?? state.counts, ghosts }, totals);
}

/** A file counts towards total progress once its upload has started and its size is known. */
function contribution(file: FerryFile | undefined): [number, number] {
  const p = file?.progress;
  if (!p || p.uploadStarted === null || p.bytesTotal === null) return [0, 0];
  return [p.bytesUploaded, p.bytesTotal];
}

function adjust(totals: FerryState['totals'], before: FerryFile | undefined, after: FerryFile | undefined) {
  const [d0, t0] = contribution(before);
  const [d1, t1] = contribution(after);
  if (d0 === d1 && t0 === t1) return totals;
  return { bytesUploaded: totals.bytesUploaded - d0 + d1, bytesTotal: totals.bytesTotal - t0 + t1 };
}

function withTotals(state: FerryState, totals: FerryState['totals']): FerryState {
  const totalProgress = totals.bytesTotal === 0 ? 0 : Math.round((totals.bytesUploaded / totals.bytesTotal) * 100);
  return { ...state, totals, totalProgress };
}

function percent(done: number, total: number | null): number {
  if (!total) return 0;
  return Math.min(100, Math.round((done / total) * 1000) / 10);
}
