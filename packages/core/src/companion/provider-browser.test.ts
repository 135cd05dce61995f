import { afterEach, describe, expect, it } from 'vitest';
import { Ferry, type FerryOptions } from '../ferry.ts';
import { fakeCompanion, file, folder } from '../test/fake-companion.ts';
import type { ProviderItem } from './provider.ts';

const photos = Array.from({ length: 12 }, (_, i) => file(`photo-${i}.jpg`, { mimeType: 'image/jpeg' }));
const tree: Record<string, ProviderItem[]> = {
  root: [
    folder('Projects'),
    folder('Empty'),
    file('notes.txt'),
    file('Report.pdf', { mimeType: 'application/pdf', size: 2048 }),
    file('huge.iso', { mimeType: 'application/octet-stream', size: 5_000_000_000 }),
    file('form', { custom: { unsupported: true, unsupportedReason: 'Google Forms cannot be downloaded' } }),
    ...photos,
  ],
  'dir-Projects': [folder('Sub'), file('plan.md', { size: 5 }), file('budget.xlsx', { size: 7 })],
  'dir-Sub': [file('deep-1.txt'), file('deep-2.txt'), file('deep-3.txt')],
  'dir-Empty': [],
};

let ferry: Ferry;
afterEach(() => ferry?.destroy());

function setup(pageSize = 1000, options: FerryOptions = {}) {
  const fake = fakeCompanion(tree, pageSize);
  ferry = new Ferry({
    companionUrl: 'http://c.test',
    online: { isOnline: () => true },
    providerOptions: { fetch: fake.fetch },
    ...options,
  });
  const client = ferry.providers.client('drive');
  const browser = ferry.providers.browser('drive');
  return { fake, client, browser };
}

async function connected(pageSize?: number, options?: FerryOptions) {
  const t = setup(pageSize, options);
  t.client.setToken('good');
  t.browser.start();
  await until(() => t.browser.getState().status === 'ready');
  return t;
}

async function until(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 0));
  expect(check()).toBe(true);
}

const names = (items: readonly ProviderItem[]) => items.map((i) => i.name);
const item = (name: string) =>
  Object.values(tree)
    .flat()
    .find((i) => i.name === name) as ProviderItem;

describe('ProviderBrowser', () => {
  it('without a token shows the auth view; with one it opens the root with the account name', async () => {
    const t = setup();
    t.browser.start();
    expect(t.browser.getState().status).toBe('auth');
    expect(t.fake.calls).toEqual([]);
    t.client.setToken('good');
    const other = ferry.providers.browser('drive');
    expect(other).toBe(t.browser);
    await until(() => t.browser.getState().status === 'ready');
    expect(t.fake.calls.map((c) => c.path)).toEqual(['/drive/list/root']);
    const s = t.browser.getState();
    expect(s.status).toBe('ready');
    expect(s.username).toBe('ada@example.com');
    expect(s.crumbs).toEqual([{ requestPath: 'root', name: 'Google Drive' }]);
    expect(s.items).toHaveLength(tree.root?.length ?? 0);
  });

  it('loads more pages on demand, one request at a time, to the end', async () => {
    const t = await connected(5);
    expect(t.browser.getState().items).toHaveLength(5);
    await Promise.all([t.browser.loadMore(), t.browser.loadMore()]);
    expect(t.browser.getState().items).toHaveLength(10);
    while (t.browser.getState().nextPagePath !== null) await t.browser.loadMore();
    expect(names(t.browser.getState().items)).toEqual(names(tree.root ?? []));
    expect(t.fake.calls.map((c) => c.path)).toEqual([
      '/drive/list/root',
      '/drive/list/root?cursor=5',
      '/drive/list/root?cursor=10',
      '/drive/list/root?cursor=15',
    ]);
  });

  it('opens folders with breadcrumbs, goes back, and keeps the selection across folders', async () => {
    const t = await connected();
    t.browser.toggle(item('notes.txt'));
    await t.browser.openFolder(item('Projects'));
    expect(t.browser.getState().crumbs.map((c) => c.name)).toEqual(['Google Drive', 'Projects']);
    expect(names(t.browser.getState().items)).toEqual(['Sub', 'plan.md', 'budget.xlsx']);
    t.browser.toggle(item('plan.md'));
    await t.browser.openFolder(item('Sub'));
    expect(t.browser.getState().crumbs.map((c) => c.name)).toEqual(['Google Drive', 'Projects', 'Sub']);
    await t.browser.goTo(0);
    expect(t.browser.getState().crumbs).toHaveLength(1);
    expect([...t.browser.getState().selected.keys()]).toEqual(['rp-notes.txt', 'rp-plan.md']);
  });

  it('filters by name, case-insensitively, and select all takes only the matching pickable items', async () => {
    const t = await connected();
    t.browser.setFilter('PHOTO-1');
    expect(names(t.browser.visible())).toEqual(['photo-1.jpg', 'photo-10.jpg', 'photo-11.jpg']);
    expect(t.browser.visible()).toBe(t.browser.visible());
    await t.browser.toggleAll();
    expect(t.browser.allSelected()).toBe(true);
    expect(t.browser.summary()).toEqual({ files: 3, folders: 0, total: 3, counting: false });
    await t.browser.toggleAll();
    expect(t.browser.getState().selected.size).toBe(0);
    t.browser.setFilter('');
    await t.browser.toggleAll();
    // Every file and folder but the unsupported Google Form.
    expect(t.browser.getState().selected.has('rp-form')).toBe(false);
    expect(t.browser.getState().selected.size).toBe((tree.root?.length ?? 0) - 1);
  });

  it('select all first loads the pages not seen yet', async () => {
    const t = await connected(4);
    await t.browser.toggleAll();
    expect(t.browser.getState().nextPagePath).toBeNull();
    expect(t.browser.getState().selected.size).toBe((tree.root?.length ?? 0) - 1);
  });

  it('shift-range selects from the last toggled item to this one, in the filtered order, skipping unpickable items', async () => {
    const t = await connected();
    t.browser.toggle(item('notes.txt'));
    t.browser.toggle(item('photo-2.jpg'), true);
    expect([...t.browser.getState().selected.keys()]).toEqual([
      'rp-notes.txt',
      'rp-Report.pdf',
      'rp-huge.iso',
      'rp-photo-0.jpg',
      'rp-photo-1.jpg',
      'rp-photo-2.jpg',
    ]);
    // A shift-click on a selected item unselects the range back to the anchor.
    t.browser.toggle(item('photo-0.jpg'), true);
    expect([...t.browser.getState().selected.keys()]).toEqual(['rp-notes.txt', 'rp-Report.pdf', 'rp-huge.iso']);
    // Without an anchor in view (filtered out), a shift-click toggles one item.
    t.browser.setFilter('photo');
    t.browser.toggle(item('photo-5.jpg'), true);
    t.browser.toggle(item('photo-3.jpg'), true);
    expect(t.browser.getState().selected.has('rp-photo-4.jpg')).toBe(true);
  });

  it('a selected folder counts its files recursively while they are listed, and adds them with their paths', async () => {
    const t = await connected(2);
    t.browser.toggle(item('Projects'));
    t.browser.toggle(item('Empty'));
    expect(t.browser.summary()).toMatchObject({ folders: 2, counting: true });
    await until(() => !t.browser.summary().counting);
    expect(t.browser.getState().folders.get('dir-Projects')).toEqual({ status: 'done', files: 5 });
    expect(t.browser.getState().folders.get('dir-Empty')).toEqual({ status: 'done', files: 0 });
    t.browser.toggle(item('Report.pdf'));
    expect(t.browser.summary()).toEqual({ files: 1, folders: 2, total: 6, counting: false });

    await expect(t.browser.addSelected()).resolves.toEqual({ added: 6, refused: 0 });
    const files = ferry.getFiles().map((f) => [f.name, f.relativePath ?? null, f.source, f.size, f.remote]);
    expect(files).toEqual([
      [
        'plan.md',
        'Projects/plan.md',
        'drive',
        5,
        { providerName: 'drive', requestPath: 'rp-plan.md', body: { fileId: 'id-plan.md' } },
      ],
      [
        'budget.xlsx',
        'Projects/budget.xlsx',
        'drive',
        7,
        { providerName: 'drive', requestPath: 'rp-budget.xlsx', body: { fileId: 'id-budget.xlsx' } },
      ],
      [
        'deep-1.txt',
        'Projects/Sub/deep-1.txt',
        'drive',
        10,
        { providerName: 'drive', requestPath: 'rp-deep-1.txt', body: { fileId: 'id-deep-1.txt' } },
      ],
      [
        'deep-2.txt',
        'Projects/Sub/deep-2.txt',
        'drive',
        10,
        { providerName: 'drive', requestPath: 'rp-deep-2.txt', body: { fileId: 'id-deep-2.txt' } },
      ],
      [
        'deep-3.txt',
        'Projects/Sub/deep-3.txt',
        'drive',
        10,
        { providerName: 'drive', requestPath: 'rp-deep-3.txt', body: { fileId: 'id-deep-3.txt' } },
      ],
      [
        'Report.pdf',
        null,
        'drive',
        2048,
        { providerName: 'drive', requestPath: 'rp-Report.pdf', body: { fileId: 'id-Report.pdf' } },
      ],
    ]);
    expect(ferry.getFiles().every((f) => f.isRemote && f.state === 'waiting')).toBe(true);
    expect(t.browser.getState().selected.size).toBe(0);
    // Sub-folders were paged through: Projects has 3 items on 2 pages.
    expect(t.fake.calls.map((c) => c.path)).toContain('/drive/list/dir-Projects?cursor=2');
  });

  it('unselecting a folder stops counting it', async () => {
    const t = await connected(1);
    t.browser.toggle(item('Projects'));
    t.browser.toggle(item('Projects'));
    expect(t.browser.summary()).toEqual({ files: 0, folders: 0, total: 0, counting: false });
    expect(t.browser.getState().folders.size).toBe(0);
  });

  it('checks restrictions before adding: refused types and sizes cannot be picked, and too many files are not added', async () => {
    const t = await connected(1000, {
      restrictions: { allowedFileTypes: ['image/*', '.pdf'], maxFileSize: 1_000_000 },
    });
    expect(t.browser.problem(item('notes.txt'))).toBe('You can only upload: image/*, .pdf');
    expect(t.browser.problem(item('huge.iso'))).toBe('You can only upload: image/*, .pdf');
    expect(t.browser.problem(item('Report.pdf'))).toBeNull();
    expect(t.browser.problem(item('form'))).toBe('Google Forms cannot be downloaded');
    t.browser.toggle(item('notes.txt'));
    expect(t.browser.getState().selected.size).toBe(0);
    // A folder counts only the files that may be added.
    t.browser.toggle(item('Projects'));
    await until(() => !t.browser.summary().counting);
    expect(t.browser.getState().folders.get('dir-Projects')?.files).toBe(0);

    ferry.destroy();
    const limited = await connected(1000, { restrictions: { maxNumberOfFiles: 2 } });
    limited.browser.toggle(item('notes.txt'));
    limited.browser.toggle(item('photo-3.jpg'), true);
    const result = await limited.browser.addSelected();
    expect(result).toEqual({ added: 0, refused: 7 });
    expect(ferry.getFiles()).toHaveLength(0);
    expect(ferry.getState().info.map((i) => i.message)).toEqual(['You can only upload 2 files']);
    expect(limited.browser.getState().selected.size).toBe(7);
  });

  it('a token refused for good returns to the auth view and clears the selection', async () => {
    const t = await connected();
    t.browser.toggle(item('notes.txt'));
    t.fake.valid.clear();
    await t.browser.openFolder(item('Projects'));
    const s = t.browser.getState();
    expect(s.status).toBe('auth');
    expect(s.error).toBe('Authorization required');
    expect(s.selected.size).toBe(0);
    expect(s.crumbs).toHaveLength(1);
    expect(t.client.token).toBeNull();
  });

  it('logout forgets the account and shows the auth view', async () => {
    const t = await connected();
    await t.browser.logout();
    expect(t.fake.calls.at(-1)).toEqual({ method: 'GET', path: '/drive/logout', token: 'good' });
    expect(t.browser.getState()).toMatchObject({ status: 'auth', username: null, items: [] });
  });

  it('a folder that fails to open shows the companion message', async () => {
    const t = await connected();
    await t.browser.openFolder(folder('Gone', 'dir-gone'));
    expect(t.browser.getState()).toMatchObject({ status: 'error', error: 'No such folder' });
  });
});
