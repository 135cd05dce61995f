import { describe, expect, test } from 'vitest';
import { type Action, emptyProgress, initialState, noCounts, reduce } from './reducer.ts';
import type { FerryFile, FerryState } from './types.ts';

function file(id: string, size: number): FerryFile {
  return {
    id,
    source: 'local',
    name: `${id}.bin`,
    type: 'application/octet-stream',
    data: null,
    size,
    meta: {},
    state: 'waiting',
    progress: emptyProgress(size),
    error: null,
    isPaused: false,
    isRemote: false,
  };
}

describe('reduce', () => {
  test('adding many files is one new state with every id in order', () => {
    const files = Array.from({ length: 1000 }, (_, i) => file(`f${i}`, 10));
    const next = reduce(initialState, { type: 'add', files });
    expect(next.fileIds).toHaveLength(1000);
    expect(next.fileIds[999]).toBe('f999');
    expect(initialState.fileIds).toHaveLength(0);
  });

  test('progress and success update percentage and total progress by size, incrementally', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 100), file('b', 300), file('c', 600)] });
    s = reduce(s, { type: 'start', ids: ['a'], at: 1 });
    s = reduce(s, { type: 'start', ids: ['b'], at: 2 });
    expect(s.files.a?.state).toBe('uploading');
    expect(s.files.a?.progress.uploadStarted).toBe(1);
    s = reduce(s, { type: 'progress', updates: [{ id: 'a', bytesUploaded: 50, bytesTotal: 100 }] });
    expect(s.files.a?.progress.percentage).toBe(50);
    expect(s.totals).toEqual({ bytesUploaded: 50, bytesTotal: 400 });
    expect(s.totalProgress).toBe(13);
    s = reduce(s, { type: 'success', id: 'b', response: { uploadURL: '/files/x' } });
    expect(s.files.b?.state).toBe('complete');
    expect(s.files.b?.uploadURL).toBe('/files/x');
    expect(s.totalProgress).toBe(88);
    s = reduce(s, { type: 'remove', ids: ['b'] });
    expect(s.totals).toEqual({ bytesUploaded: 50, bytesTotal: 100 });
    expect(s.totalProgress).toBe(50);
  });

  test('a progress batch updates several files in one state and skips files not uploading', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 10), file('b', 10), file('c', 10)] });
    s = reduce(s, { type: 'start', ids: ['a'], at: 1 });
    s = reduce(s, { type: 'start', ids: ['b'], at: 1 });
    const before = s;
    s = reduce(s, {
      type: 'progress',
      updates: [
        { id: 'a', bytesUploaded: 5, bytesTotal: 10 },
        { id: 'b', bytesUploaded: 10, bytesTotal: 10 },
        { id: 'c', bytesUploaded: 3, bytesTotal: 10 },
      ],
    });
    expect(s.files.a?.progress.bytesUploaded).toBe(5);
    expect(s.files.b?.progress.bytesUploaded).toBe(10);
    expect(s.files.c).toBe(before.files.c);
    expect(s.totalProgress).toBe(75);
  });

  test('an error keeps the status and message and leaves the other files alone', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 1), file('b', 1)] });
    s = reduce(s, { type: 'error', id: 'a', error: { message: 'Upload error', status: 500, retryable: true } });
    expect(s.files.a?.state).toBe('error');
    expect(s.files.a?.error).toEqual({ message: 'Upload error', status: 500, retryable: true });
    expect(s.files.b).toBe(s.files.b);
    expect(s.files.b?.state).toBe('waiting');
    s = reduce(s, { type: 'retry', ids: ['a', 'b'] });
    expect(s.files.a?.state).toBe('waiting');
    expect(s.files.a?.error).toBeNull();
  });

  test('pause sets isPaused; pausing a paused file returns the same state', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 1)] });
    s = reduce(s, { type: 'pause', ids: ['a'] });
    expect(s.files.a?.isPaused).toBe(true);
    expect(reduce(s, { type: 'pause', ids: ['a'] })).toBe(s);
  });

  test('named transitions move only from the states of the state diagram', () => {
    const states = ['waiting', 'preprocessing', 'uploading', 'postprocessing', 'complete', 'paused', 'error'] as const;
    const start = reduce(initialState, {
      type: 'add',
      files: states.map((state) => ({ ...file(state, 1), state, isPaused: state === 'paused' })),
    });
    const moved = (type: 'preprocess' | 'ready' | 'pause' | 'resume' | 'postprocess') => {
      const next = reduce(start, { type, ids: [...states] });
      return states.filter((id) => next.files[id] !== start.files[id]).map((id) => `${id}->${next.files[id]?.state}`);
    };
    expect(moved('pause')).toEqual(['waiting->paused', 'uploading->paused']);
    expect(moved('resume')).toEqual(['paused->waiting']);
    expect(moved('preprocess')).toEqual(['waiting->preprocessing']);
    expect(moved('ready')).toEqual(['preprocessing->waiting']);
    expect(moved('postprocess')).toEqual(['uploading->postprocessing']);
  });

  test('resume clears isPaused; a complete or failed file cannot be paused', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 1), file('b', 1)] });
    s = reduce(s, { type: 'start', ids: ['a', 'b'], at: 1 });
    s = reduce(s, { type: 'pause', ids: ['a'] });
    expect(s.files.a).toMatchObject({ state: 'paused', isPaused: true });
    s = reduce(s, { type: 'resume', ids: ['a'] });
    expect(s.files.a).toMatchObject({ state: 'waiting', isPaused: false });
    s = reduce(s, { type: 'success', id: 'a', response: {} });
    s = reduce(s, { type: 'error', id: 'b', error: { message: 'x', retryable: true } });
    expect(reduce(s, { type: 'pause', ids: ['a', 'b'] })).toBe(s);
    expect(reduce(s, { type: 'postprocess', ids: ['a', 'b'] })).toBe(s);
  });

  test('counts of files per state follow every change without walking the files', () => {
    const walk = (st: FerryState) => {
      const c: Record<string, number> = { ...noCounts };
      for (const id of st.fileIds) {
        const state = st.files[id]?.state ?? 'waiting';
        c[state] = (c[state] ?? 0) + 1;
      }
      return c;
    };
    const changes: Action[] = [
      { type: 'add', files: [file('a', 1), file('b', 1), file('c', 1), file('d', 1)] },
      { type: 'start', ids: ['a', 'b', 'c'], at: 1 },
      { type: 'pause', ids: ['c'] },
      { type: 'success', id: 'a', response: {} },
      { type: 'error', id: 'b', error: { message: 'x', retryable: true } },
      { type: 'postprocess', ids: ['a'] },
      { type: 'preprocess', ids: ['d'] },
      { type: 'remove', ids: ['c'] },
      { type: 'retry', ids: ['b'] },
      { type: 'patch', id: 'd', patch: { preview: 'x' } },
    ];
    let s = initialState;
    for (const action of changes) {
      s = reduce(s, action);
      expect(s.counts, action.type).toEqual(walk(s));
    }
    expect(s.counts).toEqual({ ...noCounts, waiting: 1, preprocessing: 1, complete: 1 });
    expect(initialState.counts).toEqual(noCounts);
  });

  test('the ghost count follows adds, revivals, patches and removals', () => {
    const ghost = (id: string): FerryFile => ({ ...file(id, 3), state: 'paused', isPaused: true, ghost: true });
    const changes: [Action, number][] = [
      [{ type: 'add', files: [ghost('g1'), ghost('g2'), file('n', 1)], first: true }, 2],
      [{ type: 'revive', files: [{ id: 'g1', data: new Blob(['abc']), size: 3 }] }, 1],
      [{ type: 'patch', id: 'n', patch: { ghost: true } }, 2],
      [{ type: 'patch', id: 'n', patch: { ghost: false } }, 1],
      [{ type: 'remove', ids: ['g2', 'n'] }, 0],
    ];
    let s = initialState;
    for (const [action, ghosts] of changes) {
      s = reduce(s, action);
      expect(s.ghosts, action.type).toBe(ghosts);
    }
    expect(initialState.ghosts).toBe(0);
  });

  test('info queue keeps order and hides by id', () => {
    let s = reduce(initialState, { type: 'info-show', info: { id: '1', type: 'info', message: 'a', duration: 0 } });
    s = reduce(s, { type: 'info-show', info: { id: '2', type: 'error', message: 'b', duration: 0 } });
    expect(s.info.map((i) => i.id)).toEqual(['1', '2']);
    s = reduce(s, { type: 'info-hide', id: '1' });
    expect(s.info.map((i) => i.id)).toEqual(['2']);
  });

  test('actions on unknown files return the same state', () => {
    expect(reduce(initialState, { type: 'start', ids: ['nope'], at: 0 })).toBe(initialState);
    expect(reduce(initialState, { type: 'remove', ids: ['nope'] })).toBe(initialState);
    expect(reduce(initialState, { type: 'patch', id: 'nope', patch: { preview: 'x' } })).toBe(initialState);
  });
});
