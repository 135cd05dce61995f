// @vitest-environment jsdom
/**
 * A Google picker as a Dashboard source (fake Google): shown only with the page's Google app;
 * its button opens Google's picker and the picked files land in the file list; Google's refusal
 * shows as an alert.
 */
import { Ferry, type GoogleEnv } from '@ferry/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test, vi } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { Dashboard } from '../components/Dashboard.tsx';
import { FerryProvider } from '../context.tsx';

afterEach(cleanup);

function engine(env: GoogleEnv, withApp = true) {
  return new Ferry({
    uploader: new ManualUploader(),
    companionUrl: 'http://c.test',
    online: { isOnline: () => true },
    providerOptions: {
      googleEnv: env,
      ...(withApp ? { googlePicker: { clientId: 'cid', apiKey: 'key', appId: '42' } } : {}),
    },
  });
}

const fakeGoogle = (refuse = false): GoogleEnv => ({
  load: vi.fn(async () => undefined),
  requestToken: vi.fn(async () => {
    if (refuse) throw new Error('The person closed the Google sign-in');
    return { accessToken: 'tok', expiresAt: Date.now() + 3_000_000 };
  }),
  showDrivePicker: vi.fn(async () => [{ id: 'd1', name: 'report.pdf', mimeType: 'application/pdf' }]),
});

test('Drive Picker: hidden without a Google app; with one, the picked file is added and the list shows again', async () => {
  const hidden = engine(fakeGoogle(), false);
  const { unmount } = render(
    <FerryProvider ferry={hidden}>
      <Dashboard providers={['google-drive-picker']} />
    </FerryProvider>,
  );
  expect(screen.queryByRole('button', { name: 'Google Drive Picker' })).toBeNull();
  unmount();

  const ferry = engine(fakeGoogle());
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard providers={['google-drive-picker']} />
    </FerryProvider>,
  );
  fireEvent.click(screen.getByRole('button', { name: 'Google Drive Picker' }));
  fireEvent.click(screen.getByRole('button', { name: 'Open Google Drive Picker' }));
  await screen.findByTestId('ferry-file');
  expect(ferry.getFiles()).toMatchObject([
    { name: 'report.pdf', isRemote: true, remote: { url: 'http://c.test/google-picker/get' } },
  ]);
  ferry.destroy();
});

test("Google's refusal shows as an alert in the panel", async () => {
  const ferry = engine(fakeGoogle(true));
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard providers={['google-drive-picker']} />
    </FerryProvider>,
  );
  fireEvent.click(screen.getByRole('button', { name: 'Google Drive Picker' }));
  fireEvent.click(screen.getByRole('button', { name: 'Open Google Drive Picker' }));
  expect((await screen.findByRole('alert')).textContent).toBe('The person closed the Google sign-in');
  expect(ferry.getFiles()).toEqual([]);
  ferry.destroy();
});
