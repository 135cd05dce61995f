// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FRAME_MS } from '../changes.ts';
import { FerryProvider } from '../context.tsx';
import { Informer } from './Informer.tsx';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

test('toasts come from the queue, last their duration, and errors offer details', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  render(
    <FerryProvider ferry={ferry}>
      <Informer />
    </FerryProvider>,
  );
  act(() => {
    ferry.info({ message: 'Upload error', details: 'HTTP 500 from /files/' }, 'error', 5000);
  });
  const toast = screen.getByRole('alert');
  expect(toast.textContent).toContain('Upload error');
  expect(screen.queryByText('HTTP 500 from /files/')).toBeNull();
  fireEvent.click(screen.getByRole('button', { name: 'Details' }));
  expect(screen.getByText('HTTP 500 from /files/')).toBeTruthy();

  act(() => {
    vi.advanceTimersByTime(4999);
  });
  expect(screen.queryByRole('alert')).not.toBeNull();
  act(() => {
    vi.advanceTimersByTime(1);
  });
  expect(screen.queryByRole('alert')).toBeNull();
});

test('the dismiss button hides a toast at once', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  render(
    <FerryProvider ferry={ferry}>
      <Informer />
    </FerryProvider>,
  );
  act(() => {
    ferry.info('Saved', 'success', 0);
  });
  expect(screen.getByRole('status').textContent).toContain('Saved');
  act(() => {
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
  });
  // At once: within the frame that tells components of changes, not after the toast's duration.
  await act(() => vi.advanceTimersByTimeAsync(FRAME_MS));
  expect(screen.queryByRole('status')).toBeNull();
});
