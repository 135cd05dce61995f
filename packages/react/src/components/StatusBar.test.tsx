// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FRAME_MS } from '../changes.ts';
import { FerryProvider } from '../context.tsx';
import { overallState, StatusBar } from './StatusBar.tsx';

// Fake timers: the engine's microtasks and timers, and the frame that tells components of
// changes, run when the test advances the clock.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const zero = { waiting: 0, preprocessing: 0, uploading: 0, postprocessing: 0, paused: 0, complete: 0, error: 0 };

test.each([
  [{}, 'empty'],
  [{ waiting: 2 }, 'waiting'],
  [{ waiting: 1, uploading: 1 }, 'uploading'],
  [{ preprocessing: 1, complete: 1 }, 'preprocessing'],
  [{ postprocessing: 1 }, 'postprocessing'],
  [{ paused: 2, complete: 1 }, 'paused'],
  [{ error: 1, complete: 3 }, 'error'],
  [{ complete: 3 }, 'complete'],
])('overallState(%j) = %s', (counts, state) => {
  expect(overallState({ ...zero, ...counts })).toBe(state);
});

// Ghosts are paused files waiting to be added again: they hold nothing else back.
test.each([
  [{ paused: 2, waiting: 1 }, 2, 'waiting'],
  [{ paused: 2, error: 1 }, 2, 'error'],
  [{ paused: 2, complete: 3 }, 2, 'paused'],
  [{ paused: 3, waiting: 1 }, 2, 'paused'],
  [{ paused: 2, uploading: 1 }, 2, 'uploading'],
])('overallState(%j, ghosts %i) = %s', (counts, ghosts, state) => {
  expect(overallState({ ...zero, ...counts }, ghosts)).toBe(state);
});

test('a file added while ghosts wait shows the Upload button, and it uploads', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  render(
    <FerryProvider ferry={ferry}>
      <StatusBar />
    </FerryProvider>,
  );
  // A ghost, as recovery restores one: paused, no bytes, waiting to be added again.
  act(() => {
    const ghost = ferry.addFile({ data: new File(['abc'], 'gone.txt') }) as string;
    ferry.pauseResume(ghost);
    ferry.setFileState(ghost, { ghost: true, data: null });
  });
  await act(() => vi.advanceTimersByTimeAsync(FRAME_MS));
  expect(ferry.getState().ghosts).toBe(1);

  act(() => {
    ferry.addFile({ data: new File(['new'], 'new.txt') });
  });
  await act(() => vi.advanceTimersByTimeAsync(FRAME_MS));
  expect(screen.getByTestId('ferry-status').textContent).toBe('1 file selected');
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: 'Upload 1 file' }));
    await Promise.resolve();
  });
  await act(() => vi.advanceTimersByTimeAsync(FRAME_MS));
  expect(uploader.calls.map((p) => p.file.name)).toEqual(['new.txt']);
  ferry.destroy();
});

test('walks waiting → uploading → complete with the matching actions', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  let done = 0;
  render(
    <FerryProvider ferry={ferry}>
      <StatusBar onDone={() => (done += 1)} />
    </FerryProvider>,
  );
  expect(screen.queryByTestId('ferry-status')).toBeNull();

  act(() => {
    ferry.addFiles([{ data: new File(['abc'], 'a.txt') }, { data: new File(['defg'], 'b.txt') }]);
  });
  expect(screen.getByTestId('ferry-status').textContent).toBe('2 files selected');
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: 'Upload 2 files' }));
    await Promise.resolve();
  });
  await act(() => vi.advanceTimersByTimeAsync(FRAME_MS));
  expect(uploader.calls).toHaveLength(2);
  expect(screen.getByTestId('ferry-status').textContent).toMatch(/^Uploading: \d+%$/);
  expect(screen.getByRole('button', { name: 'Pause all' })).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Cancel' })).toBeTruthy();

  await act(async () => {
    for (const p of uploader.calls) p.succeed();
    await vi.advanceTimersByTimeAsync(FRAME_MS);
  });
  expect(screen.getByTestId('ferry-status').textContent).toBe('Complete');
  expect(screen.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('100');
  fireEvent.click(screen.getByRole('button', { name: 'Done' }));
  expect(done).toBe(1);
});

test('a failed upload shows the error state with Retry all', async () => {
  const uploader = new ManualUploader();
  const ferry = new Ferry({ uploader });
  render(
    <FerryProvider ferry={ferry}>
      <StatusBar />
    </FerryProvider>,
  );
  act(() => {
    ferry.addFile({ data: new File(['x'], 'x.txt') });
  });
  await act(async () => {
    void ferry.upload();
    await vi.advanceTimersByTimeAsync(FRAME_MS);
  });
  expect(uploader.calls).toHaveLength(1);
  await act(async () => {
    uploader.calls[0]?.fail('refused', 403);
    await vi.advanceTimersByTimeAsync(FRAME_MS);
  });
  expect(screen.getByTestId('ferry-status').textContent).toBe('1 file failed to upload');
  expect(screen.getByRole('button', { name: 'Retry all' })).toBeTruthy();
});
