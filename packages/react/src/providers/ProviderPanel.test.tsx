// @vitest-environment jsdom
import { Ferry, type FerryOptions, type LoginEnv, type ProviderItem } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { fakeCompanion, file, folder } from '../../../core/src/test/fake-companion.ts';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { Dashboard } from '../components/Dashboard.tsx';
import { FerryProvider } from '../context.tsx';
import { LIST_ROW } from './ProviderItems.tsx';
import { ProviderPanel } from './ProviderPanel.tsx';

afterEach(cleanup);

const many = (n: number) => Array.from({ length: n }, (_, i) => file(`item-${String(i).padStart(5, '0')}.txt`));

function setup(tree: Record<string, ProviderItem[]>, pageSize = 1000, options: FerryOptions = {}) {
  const fake = fakeCompanion(tree, pageSize);
  const popups: { url: string; closed: boolean; close(): void }[] = [];
  const sockets: { url: string; onmessage: ((ev: { data: unknown }) => void) | null }[] = [];
  const login: Partial<LoginEnv> = {
    open: (url) => {
      const popup = { url, closed: false, close: () => undefined };
      popups.push(popup);
      return popup;
    },
    listen: () => () => undefined,
    socket: (url) => {
      const s = {
        url,
        onmessage: null,
        onopen: null,
        onerror: null,
        onclose: null,
        readyState: 1,
        send() {},
        close() {},
      };
      sockets.push(s);
      return s;
    },
    origin: 'http://app.test',
    uuid: () => 'cb-1',
  };
  const ferry = new Ferry({
    uploader: new ManualUploader(),
    companionUrl: 'http://c.test',
    providerOptions: { fetch: fake.fetch, login },
    ...options,
  });
  return { fake, ferry, popups, sockets };
}

test('Authorization required, connect through the popup, browse a folder, pick files and add them', async () => {
  const t = setup({
    root: [folder('Holidays'), file('cv.pdf', { mimeType: 'application/pdf', size: 3000 })],
    'dir-Holidays': [
      file('beach.jpg', { mimeType: 'image/jpeg', thumbnail: 'http://c.test/t/beach' }),
      file('sea.jpg'),
    ],
  });
  let added = 0;
  render(
    <FerryProvider ferry={t.ferry}>
      <ProviderPanel provider="drive" onAdded={(n) => (added = n)} />
    </FerryProvider>,
  );
  expect(screen.getByRole('heading', { name: 'Authorization required' })).toBeTruthy();
  fireEvent.click(screen.getByRole('button', { name: 'Connect to Google Drive' }));
  expect(t.popups[0]?.url).toContain('http://c.test/drive/connect?');
  expect(t.sockets[0]?.url).toBe('ws://c.test/api2/auth-callback/token/cb-1');
  await act(async () => t.sockets[0]?.onmessage?.({ data: '{"token":"good"}' }));
  await screen.findByText('ada@example.com');
  expect(screen.getByRole('navigation', { name: 'Breadcrumbs' }).textContent).toBe('Google Drive');

  fireEvent.click(screen.getByRole('button', { name: 'Open folder Holidays' }));
  await screen.findByRole('checkbox', { name: 'Select beach.jpg' });
  expect(screen.getByRole('navigation', { name: 'Breadcrumbs' }).textContent).toBe('Google DriveHolidays');
  fireEvent.click(screen.getByRole('button', { name: 'Grid view' }));
  expect(screen.getByRole('button', { name: 'Grid view' }).getAttribute('aria-pressed')).toBe('true');
  expect(screen.getByTestId('ferry-provider-items').querySelector('img')?.getAttribute('src')).toBe(
    'http://c.test/t/beach',
  );
  fireEvent.click(screen.getByRole('checkbox', { name: 'Select all' }));
  await waitFor(() => expect(screen.getByRole('status').textContent).toBe('2 files selected'));
  fireEvent.click(screen.getByRole('button', { name: 'Google Drive' }));
  await screen.findByRole('checkbox', { name: 'Select cv.pdf' });
  fireEvent.click(screen.getByRole('checkbox', { name: 'Select cv.pdf' }));
  fireEvent.click(screen.getByRole('button', { name: 'Add 3 files' }));
  await waitFor(() => expect(added).toBe(3));
  expect(t.ferry.getFiles().map((f) => [f.name, f.source, f.isRemote, f.preview ?? null])).toEqual([
    ['beach.jpg', 'drive', true, 'http://c.test/t/beach'],
    ['sea.jpg', 'drive', true, null],
    ['cv.pdf', 'drive', true, null],
  ]);

  fireEvent.click(screen.getByRole('button', { name: 'Log out' }));
  await screen.findByRole('heading', { name: 'Authorization required' });
  expect(t.fake.calls.at(-1)).toMatchObject({ path: '/drive/logout', token: 'good' });
});

test('a 10,000-item folder renders only the rows in view and loads the next page when scrolled near the end', async () => {
  const t = setup({ root: many(10_000) }, 1000);
  t.ferry.providers.client('drive').setToken('good');
  render(
    <FerryProvider ferry={t.ferry}>
      <ProviderPanel provider="drive" />
    </FerryProvider>,
  );
  await screen.findByRole('checkbox', { name: 'Select item-00000.txt' });
  const rows = screen.getAllByTestId('ferry-provider-item');
  // jsdom has no layout: a 400 px viewport (10 rows of 44 px) plus 4 of overscan.
  expect(rows.length).toBeLessThan(20);
  expect(rows[0]?.getAttribute('aria-setsize')).toBe('1000');
  const list = screen.getByRole('list', { name: 'Google Drive' });
  expect(Number.parseInt(list.style.paddingBottom, 10)).toBe((1000 - rows.length) * LIST_ROW);
  expect(t.fake.calls.map((c) => c.path)).toEqual(['/drive/list/root']);

  const scroller = screen.getByTestId('ferry-provider-items');
  await act(async () => {
    scroller.scrollTop = 990 * LIST_ROW;
    fireEvent.scroll(scroller);
    await new Promise((r) => setTimeout(r, 50));
  });
  await waitFor(() => expect(t.fake.calls.map((c) => c.path)).toContain('/drive/list/root?cursor=1000'));
  await waitFor(() =>
    expect(screen.getAllByTestId('ferry-provider-item')[0]?.getAttribute('aria-setsize')).toBe('2000'),
  );
  expect(screen.getAllByTestId('ferry-provider-item').length).toBeLessThan(20);
});

test('keyboard: arrows move between items, End jumps to the last (scrolled into view), Shift+click picks a range', async () => {
  const t = setup({ root: many(50) });
  t.ferry.providers.client('drive').setToken('good');
  render(
    <FerryProvider ferry={t.ferry}>
      <ProviderPanel provider="drive" />
    </FerryProvider>,
  );
  const first = await screen.findByRole('checkbox', { name: 'Select item-00000.txt' });
  first.focus();
  fireEvent.keyDown(first, { key: 'ArrowDown' });
  expect(document.activeElement).toBe(screen.getByRole('checkbox', { name: 'Select item-00001.txt' }));
  fireEvent.click(document.activeElement as HTMLElement);
  fireEvent.click(screen.getByRole('checkbox', { name: 'Select item-00004.txt' }), { shiftKey: true });
  expect(screen.getByRole('status').textContent).toBe('4 files selected');
  await act(async () => {
    fireEvent.keyDown(document.activeElement as HTMLElement, { key: 'End' });
    // jsdom fires no scroll event for a scrollTop set by script; a browser does.
    fireEvent.scroll(screen.getByTestId('ferry-provider-items'));
    await new Promise((r) => setTimeout(r, 50));
  });
  await waitFor(() =>
    expect(document.activeElement).toBe(screen.getByRole('checkbox', { name: 'Select item-00049.txt' })),
  );
  fireEvent.change(screen.getByRole('searchbox', { name: 'Filter by name' }), { target: { value: '0004' } });
  await waitFor(() =>
    expect(screen.getAllByTestId('ferry-provider-item').map((r) => r.textContent?.slice(0, 14))).toEqual([
      'item-00004.txt',
      ...Array.from({ length: 10 }, (_, i) => `item-0004${i}.txt`),
    ]),
  );
});

test('the Dashboard shows the providers it is given, or those the companion enables', async () => {
  const t = setup({ root: [] });
  const { unmount } = render(
    <FerryProvider ferry={t.ferry}>
      <Dashboard providers={['drive', 'instagram']} />
    </FerryProvider>,
  );
  expect(screen.getByRole('button', { name: 'Google Drive' })).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Instagram' })).toBeTruthy();
  fireEvent.click(screen.getByRole('button', { name: 'Instagram' }));
  expect(screen.getByRole('button', { name: 'Connect to Instagram' })).toBeTruthy();
  unmount();

  render(
    <FerryProvider ferry={t.ferry}>
      <Dashboard providers />
    </FerryProvider>,
  );
  await screen.findByRole('button', { name: 'Google Drive' });
  expect(screen.queryByRole('button', { name: 'Instagram' })).toBeNull();
  expect(t.fake.calls.filter((c) => c.path === '/providers')).toHaveLength(1);
});
