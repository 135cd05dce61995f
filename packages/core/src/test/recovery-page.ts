/**
 * Test helpers of recovery's specs: one page load is an engine over a fake IndexedDB (the
 * "browser profile") with an uploader the test drives by hand (`manual-uploader.ts`); a reload
 * is a new engine over the same one.
 */
import type { IDBDatabase, IDBFactory } from 'fake-indexeddb';
import { vi } from 'vitest';
import { Ferry, type FerryOptions } from '../ferry.ts';
import { SMALL_COPY_SIZE } from '../recovery/bytes.ts';
import { dbName } from '../recovery/db.ts';
import type { FerryFile } from '../types.ts';
import { ManualUploader } from './manual-uploader.ts';

export { ManualUploader } from './manual-uploader.ts';

export const offline = { isOnline: () => true, target: new EventTarget() };
/** Every engine a test made, destroyed by {@link closeEngines}. */
export const engines: Ferry[] = [];

/** Destroys every engine the test made (call from `afterEach`). */
export function closeEngines(): void {
  for (const e of engines.splice(0)) e.destroy();
}

/** One page load: an engine over the given IndexedDB (the "browser profile"). */
export async function page(
  db: IDBFactory,
  options: { id?: string; maxCopySize?: number; sizing?: FerryOptions['sizing']; fresh?: boolean } = {},
) {
  const uploader = new ManualUploader();
  const Engine = options.fresh ? await freshFerry() : Ferry;
  const ferry = new Engine({
    id: options.id,
    uploader,
    online: offline,
    recovery: { indexedDB: db, opfs: false, throttle: 20, maxCopySize: options.maxCopySize },
    sizing: options.sizing,
  });
  engines.push(ferry);
  await settle(ferry);
  return { ferry, uploader };
}

/**
 * The engine as a new page loads it: fresh modules, so file ids start again from a new random
 * prefix and counter 1, as they do after a real reload.
 */
export async function freshFerry(): Promise<typeof Ferry> {
  vi.resetModules();
  return (await import('../ferry.ts')).Ferry;
}

/** Lets recovery read the records back (start) and finish its writes. */
export async function settle(ferry: Ferry) {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setTimeout(r, 5));
  await ferry.recovery?.flush();
}

export const file = (name: string, bytes: number[], lastModified = 1_700_000_000_000) =>
  new File([new Uint8Array(bytes)], name, { type: 'application/octet-stream', lastModified });

/** Runs `body` with `navigator.storage` (the OPFS entry point) replaced by `storage`. */
export async function withStorage(storage: unknown, body: () => Promise<void>): Promise<void> {
  const g = globalThis as { navigator?: { storage?: unknown } };
  const hadNavigator = g.navigator !== undefined;
  g.navigator ??= {};
  const nav = g.navigator;
  const before = Object.getOwnPropertyDescriptor(nav, 'storage');
  Object.defineProperty(nav, 'storage', { value: storage, configurable: true });
  try {
    await body();
  } finally {
    if (before) Object.defineProperty(nav, 'storage', before);
    else delete nav.storage;
    if (!hadNavigator) delete g.navigator;
  }
}

/** A file just over the size copied into IndexedDB in batches, filled with `fill`. */
export const big = (name: string, fill: number) =>
  new File([new Uint8Array(SMALL_COPY_SIZE + 1).fill(fill)], name, { type: 'application/octet-stream' });

/**
 * Rewrites the values of a store of the default engine's database (undefined deletes one), as
 * another version of Ferry, or the browser, might have left them.
 */
export async function rewrite(
  db: IDBFactory,
  store: string,
  change: (value: unknown, key: string) => unknown,
): Promise<void> {
  const open = db.open(dbName('ferry'));
  const conn = await new Promise<IDBDatabase>((ok, fail) => {
    open.onsuccess = () => ok(open.result);
    open.onerror = () => fail(open.error);
  });
  const tx = conn.transaction(store, 'readwrite');
  const cursor = tx.objectStore(store).openCursor();
  cursor.onsuccess = () => {
    const at = cursor.result;
    if (!at) return;
    const next = change(at.value, String(at.key));
    if (next === undefined) at.delete();
    else at.update(next);
    at.continue();
  };
  await new Promise((ok, fail) => {
    tx.oncomplete = ok;
    tx.onerror = () => fail(tx.error);
  });
  conn.close();
}

export async function bytesOf(f: FerryFile | undefined): Promise<number[]> {
  if (!f?.data) return [];
  return [...new Uint8Array(await f.data.arrayBuffer())];
}

/** `n` file names: f0.bin, f1.bin... */
export const names = (n: number) => Array.from({ length: n }, (_, i) => `f${i}.bin`);
