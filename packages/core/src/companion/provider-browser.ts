/**
 * The state of one provider's file browser, framework-free (React only renders it): connection
 * (the 'Authorization required' view until there is a token), the folder path as breadcrumbs,
 * the loaded pages of the current folder (more on demand, following `nextPagePath`), the name
 * filter, list or grid view, and the selection: files and folders (kept across folders), with
 * shift-range and select all. A selected folder is walked at once (`provider-walk.ts`) so its
 * file count shows while it grows; adding turns the selection into remote file records that
 * upload through the engine's RemoteUploader. Restrictions are checked before anything is added:
 * per file (type, size) when listing, so refused files cannot be picked, and the number of files
 * when adding. A search provider (Unsplash) has no sign-in and no folders: `search(query)` lists
 * its results, paged the same way. A form sign-in provider (WebDAV) signs in with `signIn(form)`
 * (the server URL) instead of the popup. A rate-limited listing is a wait (`waiting`, with its
 * countdown) and goes again by itself (`provider-wait.ts`).
 */
import { checkFile } from '../restrictions.ts';
import { Store } from '../store.ts';
import type { FileDescriptor } from '../types.ts';
import { ProviderAuthError, ProviderRateLimitError } from './http.ts';
import type { ProviderClient, ProviderItem, ProviderPage } from './provider.ts';
import {
  type BrowserHost,
  type BrowserState,
  type Crumb,
  type FolderCount,
  type ProviderBrowserOptions,
  perFile,
  providerDescriptor,
  type SelectionSummary,
} from './provider-state.ts';
import { retryAfterLimits, stillLimitedMessage } from './provider-wait.ts';
import { type WalkedFile, walkFolder } from './provider-walk.ts';

export {
  type BrowserHost,
  type BrowserState,
  type Crumb,
  type FolderCount,
  type ProviderBrowserOptions,
  providerDescriptor,
  type SelectionSummary,
} from './provider-state.ts';

export class ProviderBrowser {
  readonly #client: ProviderClient;
  readonly #host: BrowserHost;
  readonly #options: ProviderBrowserOptions;
  readonly #store: Store<BrowserState, Partial<BrowserState>>;
  readonly #walks = new Map<string, { controller: AbortController; done: Promise<WalkedFile[]> }>();
  /** Bumped on every navigation, so answers for a folder left behind are dropped. */
  #seq = 0;
  /** Aborted on every navigation: ends a rate-limit wait for a folder left behind. */
  #nav = new AbortController();
  #visible: { items: readonly ProviderItem[]; filter: string; result: readonly ProviderItem[] } | null = null;

  constructor(client: ProviderClient, host: BrowserHost, options: ProviderBrowserOptions) {
    this.#client = client;
    this.#host = host;
    this.#options = options;
    const initial: BrowserState = {
      status: 'idle',
      error: null,
      username: null,
      crumbs: [{ requestPath: options.rootFolder, name: options.name }],
      items: [],
      nextPagePath: null,
      loadingMore: false,
      filter: '',
      query: '',
      waiting: null,
      view: options.view ?? 'list',
      selected: new Map(),
      folders: new Map(),
      anchor: null,
      adding: false,
    };
    this.#store = new Store(initial, (s, patch) => ({ ...s, ...patch }));
    client.onTokenChange(() => {
      if (client.token === null) this.#signedOut(null);
      // A token that arrives while the auth view shows (set by the page, another browser) opens the root.
      else if (this.getState().status === 'auth') void this.#open(this.getState().crumbs.slice(0, 1));
    });
  }

  get provider(): string {
    return this.#client.id;
  }

  get name(): string {
    return this.#options.name;
  }

  /** A search provider: {@link search} instead of folders, and no sign-in. */
  get searchable(): boolean {
    return this.#options.search === true;
  }

  getState = (): BrowserState => this.#store.getState();
  subscribe = (listener: (state: BrowserState) => void): (() => void) => this.#store.subscribe(listener);

  /** Opens the root when connected, else shows the auth view (a search provider waits for a query). Does nothing once started. */
  start(): void {
    if (this.getState().status !== 'idle') return;
    if (this.searchable) this.#set({ status: 'ready' });
    else if (this.#client.token === null) this.#set({ status: 'auth' });
    else void this.#open(this.getState().crumbs.slice(0, 1));
  }

  /** Logs in through the popup (call from a click: the popup opens synchronously), then opens the root. */
  async connect(): Promise<void> {
    this.#set({ status: 'connecting', error: null });
    const login = this.#client.login();
    try {
      await login;
    } catch (error) {
      this.#set({ status: 'auth', error: (error as Error).message });
      return;
    }
    await this.#open(this.getState().crumbs.slice(0, 1));
  }

  /** A form sign-in provider (WebDAV): {@link signIn} with the form instead of {@link connect}. */
  get simpleAuth(): boolean {
    return this.#options.simpleAuth === true;
  }

  /** Signs in with `form` (WebDAV: `webdavUrl`...), then opens the root; a refusal is the auth view's error. */
  async signIn(form: Record<string, string>): Promise<void> {
    this.#set({ status: 'connecting', error: null });
    try {
      await retryAfterLimits(() => this.#client.simpleAuth(form));
    } catch (error) {
      const message =
        error instanceof ProviderRateLimitError
          ? stillLimitedMessage(this.name, this.#host.i18n)
          : (error as Error).message;
      this.#set({ status: 'auth', error: message });
      return;
    }
    await this.#open(this.getState().crumbs.slice(0, 1));
  }

  /** Forgets the account here and at the companion, and clears the selection. */
  async logout(): Promise<void> {
    try {
      await this.#client.logout();
    } catch {
      // The token is gone locally whatever the companion said.
    }
    this.#signedOut(null);
  }

  /** Opens a folder of the current listing. */
  openFolder(item: ProviderItem): Promise<void> {
    if (!item.isFolder) return Promise.resolve();
    return this.#open([...this.getState().crumbs, { requestPath: item.requestPath, name: item.name }]);
  }

  /** Goes back to breadcrumb `index` (0 = the root); for a search provider, runs its query again. */
  goTo(index: number): Promise<void> {
    const crumbs = this.getState().crumbs;
    if (index < 0 || index >= crumbs.length) return Promise.resolve();
    if (this.searchable) return this.search(this.getState().query);
    return this.#open(crumbs.slice(0, index + 1));
  }

  /** A search provider's first page of results for `query` (trimmed; a blank one does nothing). */
  search(query: string): Promise<void> {
    const text = query.trim();
    if (!this.searchable || text === '') return Promise.resolve();
    return this.#open(this.getState().crumbs.slice(0, 1), text);
  }

  /** Loads the next page of the open folder, if any (one at a time). */
  async loadMore(): Promise<void> {
    const s = this.getState();
    if (s.loadingMore || s.nextPagePath === null || s.status !== 'ready') return;
    const seq = this.#seq;
    this.#set({ loadingMore: true });
    await this.#guard(async () => {
      const page = await this.#page(s.crumbs[s.crumbs.length - 1] as Crumb, s.query, s.nextPagePath);
      if (seq !== this.#seq) return;
      this.#set({
        items: [...this.getState().items, ...page.items],
        nextPagePath: page.nextPagePath,
        username: page.username ?? this.getState().username,
      });
    });
    if (seq === this.#seq) this.#set({ loadingMore: false });
  }

  setFilter(filter: string): void {
    this.#set({ filter, anchor: null });
  }

  setView(view: 'list' | 'grid'): void {
    this.#set({ view });
  }

  /** The items of the open folder that match the filter (the same array while nothing changed). */
  visible(): readonly ProviderItem[] {
    const { items, filter } = this.getState();
    const cached = this.#visible;
    if (cached && cached.items === items && cached.filter === filter) return cached.result;
    const needle = filter.trim().toLowerCase();
    const result = needle ? items.filter((i) => i.name.toLowerCase().includes(needle)) : items;
    this.#visible = { items, filter, result };
    return result;
  }

  /** Why an item cannot be picked (unsupported, a shared drive, a restriction), or null. */
  problem(item: ProviderItem): string | null {
    if (item.custom?.unsupported) return item.custom.unsupportedReason ?? this.#host.i18n('unsupportedFile');
    if (item.custom?.isSharedDrive) return this.#host.i18n('sharedDriveNotSelectable');
    if (item.isFolder) return null;
    const size = typeof item.size === 'number' && item.size > 0 ? item.size : null;
    const rejection = checkFile(
      { name: item.name, type: item.mimeType ?? '', size },
      perFile(this.#host.restrictions),
      { count: 0, totalSize: 0, isDuplicate: false },
      this.#host.i18n,
    );
    return rejection?.message ?? null;
  }

  isSelected(item: ProviderItem): boolean {
    return this.getState().selected.has(item.requestPath);
  }

  /**
   * Selects or unselects `item`; with `range`, every visible item from the last one toggled to
   * this one takes this one's new state (shift-click).
   */
  toggle(item: ProviderItem, range = false): void {
    if (this.problem(item) !== null) return;
    const s = this.getState();
    const on = !s.selected.has(item.requestPath);
    const visible = this.visible();
    let targets: ProviderItem[] = [item];
    if (range && s.anchor !== null) {
      const from = visible.findIndex((i) => i.requestPath === s.anchor);
      const to = visible.findIndex((i) => i.requestPath === item.requestPath);
      if (from >= 0 && to >= 0) {
        targets = visible.slice(Math.min(from, to), Math.max(from, to) + 1).filter((i) => this.problem(i) === null);
      }
    }
    this.#select(targets, on);
    this.#set({ anchor: item.requestPath });
  }

  /** Whether every pickable visible item is selected (and there is at least one). */
  allSelected(): boolean {
    const { selected } = this.getState();
    const pickable = this.visible().filter((i) => this.problem(i) === null);
    return pickable.length > 0 && pickable.every((i) => selected.has(i.requestPath));
  }

  /** Selects every pickable item of the folder matching the filter (loading its remaining pages first), or unselects them all when all are selected. */
  async toggleAll(): Promise<void> {
    if (this.allSelected()) {
      this.#select(this.visible(), false);
      return;
    }
    // Every page of a folder, but only the loaded results of a search (it could go on for pages).
    while (!this.searchable && this.getState().nextPagePath !== null && this.getState().status === 'ready') {
      const before = this.getState().nextPagePath;
      await this.loadMore();
      if (this.getState().nextPagePath === before) break; // failed: select what is loaded
    }
    this.#select(
      this.visible().filter((i) => this.problem(i) === null),
      true,
    );
  }

  clearSelection(): void {
    for (const walk of this.#walks.values()) walk.controller.abort();
    this.#walks.clear();
    this.#set({ selected: new Map(), folders: new Map(), anchor: null });
  }

  /** How many files the selection would add. */
  summary(): SelectionSummary {
    const { selected, folders } = this.getState();
    let files = 0;
    let folderCount = 0;
    let inFolders = 0;
    let counting = false;
    for (const item of selected.values()) {
      if (!item.isFolder) {
        files += 1;
        continue;
      }
      folderCount += 1;
      const c = folders.get(item.requestPath);
      inFolders += c?.files ?? 0;
      if (!c || c.status === 'loading') counting = true;
    }
    return { files, folders: folderCount, total: files + inFolders, counting };
  }

  /**
   * Adds the selection to the engine as remote files (waiting for folders still being walked),
   * unless it is more files than the engine may still take. The number added and refused.
   */
  async addSelected(): Promise<{ added: number; refused: number }> {
    const s = this.getState();
    if (s.adding || s.selected.size === 0) return { added: 0, refused: 0 };
    this.#set({ adding: true });
    const descriptors: FileDescriptor[] = [];
    try {
      for (const item of s.selected.values()) {
        if (!item.isFolder) {
          descriptors.push(providerDescriptor(this.provider, item));
          continue;
        }
        const walk = this.#walks.get(item.requestPath) ?? this.#walk(item);
        for (const f of await walk.done) descriptors.push(providerDescriptor(this.provider, f.item, f.relativePath));
      }
    } catch (error) {
      this.#set({ adding: false });
      this.#failed(error);
      return { added: 0, refused: 0 };
    }
    const max = this.#host.restrictions.maxNumberOfFiles;
    if (max !== null && this.#host.getState().fileIds.length + descriptors.length > max) {
      this.#host.info(this.#host.i18n('youCanOnlyUploadX', { smart_count: max }), 'error', 5000);
      this.#set({ adding: false });
      return { added: 0, refused: descriptors.length };
    }
    const ids = this.#host.addFiles(descriptors);
    this.#set({ adding: false });
    this.clearSelection();
    return { added: ids.length, refused: descriptors.length - ids.length };
  }

  #select(items: readonly ProviderItem[], on: boolean): void {
    const selected = new Map(this.getState().selected);
    const folders = new Map(this.getState().folders);
    for (const item of items) {
      if (on === selected.has(item.requestPath)) continue;
      if (on) {
        selected.set(item.requestPath, item);
        if (item.isFolder) {
          folders.set(item.requestPath, { status: 'loading', files: 0 });
          this.#walk(item);
        }
      } else {
        selected.delete(item.requestPath);
        folders.delete(item.requestPath);
        this.#walks.get(item.requestPath)?.controller.abort();
        this.#walks.delete(item.requestPath);
      }
    }
    this.#set({ selected, folders });
  }

  /** Starts counting a folder's files; its result is what adding it adds. */
  #walk(folder: ProviderItem) {
    const controller = new AbortController();
    const key = folder.requestPath;
    const count = (status: FolderCount['status'], files: number) => {
      if (this.#walks.get(key)?.controller !== controller) return;
      const folders = new Map(this.getState().folders);
      folders.set(key, { status, files });
      this.#set({ folders });
    };
    const done = walkFolder(this.#client, folder, {
      signal: controller.signal,
      accept: (item) => this.problem(item) === null,
      onCount: (n) => count('loading', n),
    });
    const walk = { controller, done };
    this.#walks.set(key, walk);
    done.then(
      (files) => count('done', files.length),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        count('error', this.getState().folders.get(key)?.files ?? 0);
        this.#failed(error);
      },
    );
    return walk;
  }

  /** One page of `crumb` (or of `query`'s results), waiting out rate limits while it is current. */
  #page(crumb: Crumb, query: string, next: string | null): Promise<ProviderPage> {
    const seq = this.#seq;
    const client = this.#client;
    return retryAfterLimits(
      () => (this.searchable ? client.search(query, next) : client.list(next ?? crumb.requestPath)),
      {
        signal: this.#nav.signal,
        onWait: (waiting) => {
          if (seq === this.#seq) this.#set({ waiting });
        },
      },
    );
  }

  /** A new navigation: answers and waits for the previous one are dropped. */
  #navigate(): number {
    this.#nav.abort();
    this.#nav = new AbortController();
    this.#seq += 1;
    return this.#seq;
  }

  async #open(crumbs: Crumb[], query = this.getState().query): Promise<void> {
    const seq = this.#navigate();
    const last = crumbs[crumbs.length - 1] as Crumb;
    this.#set({
      status: 'loading',
      crumbs,
      query,
      items: [],
      nextPagePath: null,
      loadingMore: false,
      filter: '',
      anchor: null,
      waiting: null,
    });
    await this.#guard(async () => {
      const page = await this.#page(last, query, null);
      if (seq !== this.#seq) return;
      this.#set({
        status: 'ready',
        error: null,
        items: page.items,
        nextPagePath: page.nextPagePath,
        username: page.username ?? this.getState().username,
      });
    });
  }

  async #guard(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.#failed(error);
    }
  }

  #failed(error: unknown): void {
    if (error instanceof ProviderAuthError) {
      this.#signedOut(this.#host.i18n('authRequired'));
      return;
    }
    if ((error as Error)?.name === 'AbortError') return;
    // Past the waits, the 429's "retrying in N s" would promise a retry that never comes.
    const message =
      error instanceof ProviderRateLimitError
        ? stillLimitedMessage(this.name, this.#host.i18n)
        : ((error as Error)?.message ?? String(error));
    if (this.getState().status === 'loading') this.#set({ status: 'error', error: message });
    else this.#host.info(message, 'error', 5000);
  }

  #signedOut(error: string | null): void {
    this.clearSelection();
    this.#navigate();
    this.#set({
      waiting: null,
      status: 'auth',
      error,
      username: null,
      crumbs: this.getState().crumbs.slice(0, 1),
      items: [],
      nextPagePath: null,
      loadingMore: false,
    });
  }

  #set(patch: Partial<BrowserState>): void {
    this.#store.dispatch(patch);
  }
}
