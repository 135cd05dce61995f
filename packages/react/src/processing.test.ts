/** The processing figures the bars show (`processing.ts`). */
import type { FerryFile, FerryState } from '@ferry/core';
import { expect, test } from 'vitest';
import { batchProcessingPercent } from './processing.ts';

const file = (id: string, state: FerryFile['state'], value?: number): FerryFile =>
  ({
    id,
    state,
    progress: {
      bytesUploaded: 0,
      bytesTotal: 1,
      percentage: 0,
      uploadStarted: null,
      uploadComplete: false,
      postprocess: value === undefined ? undefined : { mode: 'determinate', value },
    },
  }) as FerryFile;

const counts = (postprocessing: number): FerryState['counts'] => ({
  waiting: 0,
  preprocessing: 0,
  uploading: 0,
  postprocessing,
  paused: 0,
  complete: 0,
  error: 0,
});

test('the batch figure is the mean of the processing files, undefined when one has none', () => {
  const files = { a: file('a', 'postprocessing', 0.2), b: file('b', 'postprocessing', 0.6), c: file('c', 'waiting') };
  expect(batchProcessingPercent({ files, counts: counts(2) })).toBe(40);
  const unknown = { ...files, d: file('d', 'postprocessing') };
  expect(batchProcessingPercent({ files: unknown, counts: counts(3) })).toBeUndefined();
});

test('with no file processing the files are not walked (the selector runs on every change)', () => {
  const files = new Proxy({} as Record<string, FerryFile>, {
    ownKeys: () => {
      throw new Error('walked the files');
    },
    get: () => {
      throw new Error('read a file');
    },
  });
  expect(batchProcessingPercent({ files, counts: counts(0) })).toBeUndefined();
});
