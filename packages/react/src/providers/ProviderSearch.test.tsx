// @vitest-environment jsdom
/**
 * The Dashboard's search provider view (Unsplash: no sign-in, a search box, results as a grid
 * with their photographer linked) and a provider's rate limit shown as a wait that counts down in
 * a live region, then lists by itself (fake timers).
 */
import { Ferry, type ProviderItem } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test, vi } from 'vitest';
import { fakeCompanion, file } from '../../../core/src/test/fake-companion.ts';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { Dashboard } from '../components/Dashboard.tsx';
import { FerryProvider } from '../context.tsx';
import { ProviderPanel } from './ProviderPanel.tsx';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const photo = (name: string, i: number): ProviderItem =>
  file(name, {
    id: `Ph${i}`,
    requestPath: `Ph${i}`,
    mimeType: 'image/jpeg',
    size: null,
    thumbnail: `https://images.example/${i}.jpg`,
    author: { name: 'Ada Lovelace', url: 'https://unsplash.example/@ada' },
  });

function setup(tree: Record<string, ProviderItem[]>) {
  const fake = fakeCompanion(tree, 1000);
  const ferry = new Ferry({
    uploader: new ManualUploader(),
    companionUrl: 'http://c.test',
    online: { isOnline: () => true },
    providerOptions: { fetch: fake.fetch },
  });
  return { fake, ferry };
}

test('Unsplash: its button opens a search box (no sign-in); results show as a grid with attribution and are added', async () => {
  const t = setup({ photos: [photo('Red fox.jpg', 1), photo('Misty forest.jpg', 2)] });
  render(
    <FerryProvider ferry={t.ferry}>
      <Dashboard providers={['unsplash']} />
    </FerryProvider>,
  );
  fireEvent.click(screen.getByRole('button', { name: 'Unsplash' }));
  expect(screen.queryByRole('button', { name: 'Connect to Unsplash' })).toBeNull();
  expect(screen.getByText('Type what you are looking for and press Search')).toBeTruthy();
  const box = screen.getByRole('searchbox', { name: 'Search Unsplash' });
  expect(screen.getByRole('button', { name: 'Search' }).hasAttribute('disabled')).toBe(true);
  fireEvent.change(box, { target: { value: 'fox' } });
  fireEvent.click(screen.getByRole('button', { name: 'Search' }));
  const check = await screen.findByRole('checkbox', { name: 'Select Red fox.jpg' });
  expect(t.fake.calls.map((c) => c.path)).toEqual(['/search/unsplash/list?q=fox']);
  expect(screen.getByTestId('ferry-provider-items').querySelector('img')?.getAttribute('src')).toBe(
    'https://images.example/1.jpg',
  );
  expect(screen.getByRole('link', { name: 'by Ada Lovelace' }).getAttribute('href')).toBe(
    'https://unsplash.example/@ada',
  );
  fireEvent.click(check);
  fireEvent.click(screen.getByRole('button', { name: 'Add 1 file' }));
  await act(async () => undefined);
  expect(t.ferry.getFiles().map((f) => [f.name, f.source, f.remote?.requestPath])).toEqual([
    ['Red fox.jpg', 'unsplash', 'Ph1'],
  ]);

  fireEvent.click(screen.getByRole('button', { name: 'Unsplash' }));
  fireEvent.change(screen.getByRole('searchbox', { name: 'Search Unsplash' }), { target: { value: 'whale' } });
  fireEvent.submit(screen.getByRole('searchbox', { name: 'Search Unsplash' }));
  await screen.findByText('No results for whale');
});

test('a rate limit shows "Waiting for Google Drive… retrying in N s", counting down in a live region, then lists', async () => {
  vi.useFakeTimers();
  const t = setup({ root: [file('a.txt'), file('b.txt')] });
  t.ferry.providers.client('drive').setToken('good');
  t.fake.rateLimited = 1;
  const { container } = render(
    <FerryProvider ferry={t.ferry}>
      <ProviderPanel provider="drive" />
    </FerryProvider>,
  );
  await act(() => vi.advanceTimersByTimeAsync(0));
  const waiting = screen.getByTestId('ferry-provider-waiting');
  expect(waiting.textContent).toBe('Waiting for Google Drive… retrying in 12 s');
  const live = container.querySelector('[aria-live="polite"]');
  expect(live?.textContent).toBe('Waiting for Google Drive… retrying in 12 s');
  // Not an error, and not a bare "Loading...".
  expect(screen.queryByRole('alert')).toBeNull();
  expect(screen.queryByText('Loading...')).toBeNull();

  await act(() => vi.advanceTimersByTimeAsync(3000));
  expect(screen.getByTestId('ferry-provider-waiting').textContent).toBe('Waiting for Google Drive… retrying in 9 s');
  // The live region says the wait once, not every second.
  expect(live?.textContent).toBe('Waiting for Google Drive… retrying in 12 s');

  await act(() => vi.advanceTimersByTimeAsync(9000));
  expect(screen.queryByTestId('ferry-provider-waiting')).toBeNull();
  expect(live?.textContent).toBe('');
  expect(screen.getByRole('checkbox', { name: 'Select a.txt' })).toBeTruthy();
  expect(t.fake.calls.map((c) => c.path)).toEqual(['/drive/list/root', '/drive/list/root']);
});
