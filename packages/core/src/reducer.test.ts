import { describe, expect, test } from 'vitest';
import { emptyProgress, initialState, reduce } from './reducer.ts';
import type { FerryFile } from './types.ts';

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

  test('progress and success update percentage and total progress by size', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 100), file('b', 300)] });
    s = reduce(s, { type: 'state', id: 'a', state: 'uploading' });
    s = reduce(s, { type: 'state', id: 'b', state: 'uploading' });
    s = reduce(s, { type: 'progress', id: 'a', bytesUploaded: 50, bytesTotal: 100 });
    expect(s.files.a?.progress.percentage).toBe(50);
    expect(s.totalProgress).toBe(13);
    s = reduce(s, { type: 'success', id: 'b', uploadURL: '/files/x' });
    expect(s.files.b?.state).toBe('complete');
    expect(s.files.b?.uploadURL).toBe('/files/x');
    expect(s.totalProgress).toBe(88);
  });

  test('an error keeps the message and leaves the other files alone', () => {
    let s = reduce(initialState, { type: 'add', files: [file('a', 1), file('b', 1)] });
    s = reduce(s, { type: 'error', id: 'a', error: { message: 'Upload error', status: 500, retryable: true } });
    expect(s.files.a?.state).toBe('error');
    expect(s.files.a?.error?.status).toBe(500);
    expect(s.files.b?.state).toBe('waiting');
  });

  test('actions on unknown files return the same state', () => {
    expect(reduce(initialState, { type: 'state', id: 'nope', state: 'uploading' })).toBe(initialState);
    expect(reduce(initialState, { type: 'remove', ids: ['nope'] })).toBe(initialState);
  });
});
