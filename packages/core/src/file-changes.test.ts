/**
 * What the store says it changed (`file-changes.ts`) against a comparison of every file: over
 * random runs of the reducer's actions, `changedSince` between any two states names every file
 * that differs (changed or removed), and is unknown only across an action that adds files.
 */
import { describe, expect, test } from 'vitest';
import { changedSince } from './file-changes.ts';
import { type Action, emptyProgress, initialState, reduce } from './reducer.ts';
import type { FerryFile, FerryState } from './types.ts';

function file(id: string, pending: boolean): FerryFile {
  const f: FerryFile = {
    id,
    source: 'local',
    name: `${id}.bin`,
    type: '',
    data: null,
    size: pending ? null : 1,
    meta: {},
    state: 'waiting',
    progress: emptyProgress(pending ? null : 1),
    error: null,
    isPaused: false,
    isRemote: false,
  };
  if (pending) f.sizePending = true;
  return f;
}

/** Every id whose entry differs between two file maps (the comparison the journal made). */
function differing(a: FerryState['files'], b: FerryState['files']): string[] {
  const ids = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...ids].filter((id) => a[id] !== b[id]).sort();
}

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
}

describe('which files a change changed', () => {
  test('between any two states: every differing file, or unknown only across an add', () => {
    for (let seed = 1; seed <= 20; seed += 1) {
      const pick = random(seed);
      let state = reduce(initialState, {
        type: 'add',
        files: Array.from({ length: 60 }, (_, i) => file(`f${i}`, true)),
      });
      const states: { state: FerryState; adds: number }[] = [{ state, adds: 0 }];
      let adds = 0;
      let next = 60;
      for (let step = 0; step < 40; step += 1) {
        const ids = state.fileIds;
        const some = () => Array.from({ length: 1 + pick(8) }, () => ids[pick(ids.length)] as string);
        const kind = pick(7);
        let action: Action;
        if (kind === 0) {
          action = { type: 'add', files: [file(`f${next}`, pick(2) === 0)] };
          next += 1;
          adds += 1;
        } else if (kind === 1) action = { type: 'remove', ids: some() };
        else if (kind === 2) action = { type: 'start', ids: some(), at: step };
        else if (kind === 3) action = { type: 'pause', ids: some() };
        else if (kind === 4)
          action = { type: 'progress', updates: some().map((id) => ({ id, bytesUploaded: step, bytesTotal: 100 })) };
        else
          action = {
            type: 'sized',
            sizes: some().map((id) => ({ id, size: step })),
            rejected: pick(3) === 0 ? some().slice(0, 1) : [],
          };
        state = reduce(state, action);
        states.push({ state, adds });
      }
      for (let i = 0; i < states.length; i += 1) {
        for (let j = i; j < states.length; j += 1) {
          const [a, b] = [states[i], states[j]] as [(typeof states)[0], (typeof states)[0]];
          const said = changedSince(b.state.files, a.state.files);
          if (b.adds !== a.adds) continue;
          // Known whenever no file was added in between, and naming every differing file.
          expect(said, `seed ${seed}, states ${i}..${j}`).toBeDefined();
          const named = new Set(said);
          expect(differing(a.state.files, b.state.files).filter((id) => !named.has(id))).toEqual([]);
          expect(named.size).toBe(said?.length);
        }
      }
    }
  });

  test('unknown across an add, and for a map that is not an earlier one of the store', () => {
    const one = reduce(initialState, { type: 'add', files: [file('a', true)] });
    const two = reduce(one, { type: 'add', files: [file('b', true)] });
    const sized = reduce(two, { type: 'sized', sizes: [{ id: 'b', size: 3 }], rejected: [] });
    expect(changedSince(sized.files, two.files)).toEqual(['b']);
    expect(changedSince(sized.files, one.files)).toBeUndefined();
    expect(changedSince(sized.files, { ...two.files })).toBeUndefined();
    expect(changedSince(sized.files, sized.files)).toEqual([]);
  });
});
