// @vitest-environment jsdom
/**
 * An import waiting out its provider's rate limit, in the Dashboard's file list: the companion's
 * `waiting` frame shows as "Waiting for Google Drive… retrying in N s", counting down (fake
 * timers), in a live region that says it once; bytes moving again bring the percentage back.
 */
import { Ferry, providerDescriptor, RemoteUploader } from '@ferry/core';
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, test, vi } from 'vitest';
import { fakeCompanion, file } from '../../../core/src/test/fake-companion.ts';
import { FakeSocket } from '../../../core/src/test/fake-socket.ts';
import { FerryProvider } from '../context.tsx';
import { Dashboard } from './Dashboard.tsx';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

test('a provider import shows its rate-limit wait counting down, then its progress again', async () => {
  vi.useFakeTimers();
  const fake = fakeCompanion({});
  const sockets: FakeSocket[] = [];
  const ferry = new Ferry({
    companionUrl: 'http://c.test',
    online: { isOnline: () => true },
    providerOptions: { fetch: fake.fetch },
    uploader: new RemoteUploader({
      endpoint: 'http://dest.test/files/',
      socket: (url) => {
        const s = new FakeSocket(url);
        sockets.push(s);
        return s;
      },
    }),
  });
  ferry.providers.client('drive').setToken('good');
  ferry.addFiles([providerDescriptor('drive', file('beach.jpg', { size: 100 }))]);
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard />
    </FerryProvider>,
  );
  void ferry.upload();
  await act(() => vi.advanceTimersByTimeAsync(0));
  const socket = sockets[0] as FakeSocket;
  await act(async () => {
    socket.open();
    socket.frame({ action: 'progress', payload: { bytesUploaded: 40, bytesTotal: 100 } });
    socket.frame({ action: 'waiting', payload: { retryAfter: 12, message: 'Google Drive is limiting requests' } });
    // The view renders on the next frame.
    await vi.advanceTimersByTimeAsync(100);
  });
  const state = () => screen.getByTestId('ferry-file').querySelector('.ferry-file-state')?.textContent;
  const live = screen.getByTestId('ferry-file').querySelector('[aria-live="polite"]');
  expect(state()).toBe('Waiting for Google Drive… retrying in 12 s');
  expect(live?.textContent).toBe('Waiting for Google Drive… retrying in 12 s');
  await act(() => vi.advanceTimersByTimeAsync(3000));
  expect(state()).toBe('Waiting for Google Drive… retrying in 9 s');
  expect(live?.textContent).toBe('Waiting for Google Drive… retrying in 12 s');
  // A wait, not a failure.
  expect(ferry.getFiles()[0]?.state).toBe('uploading');
  await act(async () => {
    socket.frame({ action: 'progress', payload: { bytesUploaded: 60, bytesTotal: 100 } });
    await vi.advanceTimersByTimeAsync(1000);
  });
  expect(state()).toBe('60%');
  expect(live?.textContent).toBe('');
  ferry.destroy();
});
