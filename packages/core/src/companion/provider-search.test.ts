/**
 * A search provider (Unsplash) in the engine: known without asking, no sign-in, Companion's
 * search routes (`/search/unsplash/list?q=`, `nextPageQuery` appended verbatim), results picked
 * into remote files that import through `/search/unsplash/get/{id}`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Ferry, type FerryOptions } from '../ferry.ts';
import { fakeCompanion, file } from '../test/fake-companion.ts';
import { ManualUploader } from '../test/manual-uploader.ts';
import type { ProviderItem } from './provider.ts';
import { RemoteUploader } from './remote.ts';

const photos: ProviderItem[] = Array.from({ length: 5 }, (_, i) =>
  file(`Red fox ${i}.jpg`, {
    id: `Ph00000${i}xY`,
    requestPath: `Ph00000${i}xY`,
    mimeType: 'image/jpeg',
    size: null,
    thumbnail: `https://images.example/${i}.jpg`,
    author: { name: 'Ada Lovelace', url: 'https://unsplash.example/@ada' },
  }),
);

let ferry: Ferry;
afterEach(() => ferry?.destroy());

async function until(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 0));
  expect(check()).toBe(true);
}

function setup(uploader: FerryOptions['uploader'] = new ManualUploader()) {
  const fake = fakeCompanion({ photos }, 2);
  ferry = new Ferry({
    uploader,
    companionUrl: 'http://c.test',
    online: { isOnline: () => true },
    providerOptions: { fetch: fake.fetch },
  });
  return { fake, browser: ferry.providers.browser('unsplash') };
}

describe('a search provider', () => {
  it('starts without sign-in, searches, pages with nextPageQuery and adds picked results', async () => {
    const { fake, browser } = setup();
    expect(browser.searchable).toBe(true);
    browser.start();
    expect(browser.getState()).toMatchObject({ status: 'ready', query: '', items: [], view: 'grid' });
    await browser.search('   ');
    expect(fake.calls).toEqual([]);

    await browser.search(' red fox ');
    expect(browser.getState()).toMatchObject({ status: 'ready', query: 'red fox', nextPagePath: 'cursor=2' });
    expect(browser.getState().items.map((i) => i.name)).toEqual(['Red fox 0.jpg', 'Red fox 1.jpg']);
    await browser.loadMore();
    await browser.loadMore();
    expect(browser.getState().items).toHaveLength(5);
    expect(browser.getState().nextPagePath).toBeNull();
    expect(fake.calls.map((c) => [c.path, c.token])).toEqual([
      ['/search/unsplash/list?q=red%20fox', null],
      ['/search/unsplash/list?q=red%20fox&cursor=2', null],
      ['/search/unsplash/list?q=red%20fox&cursor=3', null],
    ]);
    expect(browser.getState().items[0]?.author).toEqual({ name: 'Ada Lovelace', url: 'https://unsplash.example/@ada' });

    browser.toggle(browser.getState().items[1] as ProviderItem);
    browser.toggle(browser.getState().items[4] as ProviderItem);
    expect(await browser.addSelected()).toEqual({ added: 2, refused: 0 });
    expect(ferry.getFiles().map((f) => [f.name, f.source, f.size, f.remote?.requestPath, f.preview])).toEqual([
      ['Red fox 1.jpg', 'unsplash', null, 'Ph000001xY', 'https://images.example/1.jpg'],
      ['Red fox 4.jpg', 'unsplash', null, 'Ph000004xY', 'https://images.example/4.jpg'],
    ]);
  });

  it('select all takes the loaded results only (a search could go on for many pages)', async () => {
    const { fake, browser } = setup();
    browser.start();
    await browser.search('fox');
    await browser.toggleAll();
    expect(browser.summary().total).toBe(2);
    expect(fake.calls).toHaveLength(1);
  });

  it('a new search replaces the results and keeps what was picked', async () => {
    const { browser } = setup();
    browser.start();
    await browser.search('fox 3');
    browser.toggle(browser.getState().items[0] as ProviderItem);
    await browser.search('nothing like it');
    expect(browser.getState()).toMatchObject({ status: 'ready', query: 'nothing like it', items: [] });
    expect(browser.summary().total).toBe(1);
  });

  it('imports a picked result through /search/unsplash/get/{id}', async () => {
    const sockets: string[] = [];
    const uploader = new RemoteUploader({
      endpoint: 'http://dest.test/files/',
      socket: (url) => {
        sockets.push(url);
        const s = {
          onopen: null,
          onerror: null,
          onclose: null,
          readyState: 1,
          send() {},
          close() {},
          onmessage: null as ((ev: { data: unknown }) => void) | null,
        };
        queueMicrotask(() => s.onmessage?.({ data: JSON.stringify({ action: 'success', payload: { url: 'u' } }) }));
        return s;
      },
    });
    const { fake, browser } = setup(uploader);
    browser.start();
    await browser.search('fox 2');
    browser.toggle(browser.getState().items[0] as ProviderItem);
    await browser.addSelected();
    void ferry.upload();
    await until(() => ferry.getFiles()[0]?.state === 'complete');
    const get = fake.calls.find((c) => c.method === 'POST');
    expect(get).toMatchObject({ path: '/search/unsplash/get/Ph000002xY', token: null });
    expect((get?.body as { fileId?: string } | undefined)?.fileId).toBe('Ph000002xY');
    expect(sockets).toEqual(['ws://c.test/api/transfer-Ph000002xY']);
  });
});
