// @vitest-environment jsdom
/**
 * A form sign-in provider in the Dashboard (WebDAV): its button opens a form asking for the
 * server URL (no popup); the companion's refusal shows as an alert in its own words; signed in,
 * the folder lists and a picked file is added as a remote file of the provider.
 */
import { Ferry } from '@ferry/core';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { Dashboard } from '../components/Dashboard.tsx';
import { FerryProvider } from '../context.tsx';

afterEach(cleanup);

const bodies: unknown[] = [];
const fakeFetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
  const path = new URL(String(input)).pathname;
  const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status });
  if (path === '/providers') {
    return json({ providers: [{ id: 'webdav', name: 'WebDAV', rootFolder: '', simpleAuth: true }] });
  }
  if (path === '/webdav/simple-auth') {
    const body = JSON.parse(String(init.body)) as { form: { webdavUrl: string } };
    bodies.push(body);
    if (body.form.webdavUrl.startsWith('http://192.168.')) {
      return json({ message: 'The WebDAV URL points at an address that is not allowed' }, 400);
    }
    return json({ uppyAuthToken: 'sealed' });
  }
  if (path === '/webdav/list/') {
    const item = { isFolder: false, id: '%2Fnotes.txt', name: 'notes.txt', requestPath: '%2Fnotes.txt', size: 5 };
    return json({ username: 'alice@dav.example', items: [item], nextPagePath: null });
  }
  return json({ message: 'unexpected' }, 500);
}) as typeof fetch;

test('WebDAV: a URL form instead of the popup, the server refusal in its words, then the listing and an import', async () => {
  const ferry = new Ferry({
    uploader: new ManualUploader(),
    companionUrl: 'http://c.test',
    online: { isOnline: () => true },
    providerOptions: { fetch: fakeFetch },
  });
  render(
    <FerryProvider ferry={ferry}>
      <Dashboard providers />
    </FerryProvider>,
  );
  fireEvent.click(await screen.findByRole('button', { name: 'WebDAV' }));
  expect(screen.queryByRole('button', { name: 'Connect to WebDAV' })).toBeNull();
  const form = screen.getByRole('form', { name: 'Sign in to WebDAV' });
  expect(form).toBeTruthy();
  const signIn = screen.getByRole('button', { name: 'Sign in' });
  expect(signIn.hasAttribute('disabled')).toBe(true);

  fireEvent.change(screen.getByLabelText('Server URL'), { target: { value: ' http://192.168.1.9/dav/ ' } });
  fireEvent.click(signIn);
  expect((await screen.findByRole('alert')).textContent).toBe(
    'The WebDAV URL points at an address that is not allowed',
  );
  expect(bodies.at(-1)).toEqual({ form: { webdavUrl: 'http://192.168.1.9/dav/' } });

  fireEvent.change(screen.getByLabelText('Server URL'), { target: { value: 'https://dav.example/files/' } });
  fireEvent.change(screen.getByLabelText('Username (optional)'), { target: { value: 'alice' } });
  fireEvent.change(screen.getByLabelText('App password (optional)'), { target: { value: 's3cret' } });
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
  fireEvent.click(await screen.findByRole('checkbox', { name: 'Select notes.txt' }));
  expect(bodies.at(-1)).toEqual({
    form: { webdavUrl: 'https://dav.example/files/', username: 'alice', password: 's3cret' },
  });
  fireEvent.click(screen.getByRole('button', { name: 'Add 1 file' }));
  await screen.findByTestId('ferry-file');
  const [file] = ferry.getFiles();
  expect(file).toMatchObject({
    name: 'notes.txt',
    isRemote: true,
    remote: { providerName: 'webdav', requestPath: '%2Fnotes.txt' },
  });
  ferry.destroy();
});
