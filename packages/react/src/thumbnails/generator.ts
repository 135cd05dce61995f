/**
 * Thumbnails off the main thread: a Worker built from the source of `makeThumbnail` (so it works
 * with any bundler) where OffscreenCanvas exists in workers, else the main thread. One generator
 * per engine: it queues requests (two at a time), puts the object URL on the file as `preview`,
 * and revokes it when the file is removed. Framework-free.
 */
import type { Ferry } from '@ferry/core';
import { cappedSize, makeThumbnail } from './make.ts';

export const THUMBNAIL_WIDTH = 280;

type Reply = { id: number; blob?: Blob; error?: string };

function startWorker(): Worker | null {
  if (typeof Worker !== 'function' || typeof OffscreenCanvas !== 'function' || typeof Blob !== 'function') return null;
  // Function names survive minification consistently: makeThumbnail calls cappedSize by its (minified) name.
  const source = `const ${cappedSize.name} = ${cappedSize.toString()};
const ${makeThumbnail.name} = ${makeThumbnail.toString()};
self.onmessage = async (e) => {
  const { id, blob, width } = e.data;
  try { self.postMessage({ id, blob: await ${makeThumbnail.name}(blob, width) }); }
  catch (err) { self.postMessage({ id, error: String(err && err.message || err) }); }
};`;
  try {
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const worker = new Worker(url);
    URL.revokeObjectURL(url);
    return worker;
  } catch {
    return null;
  }
}

export type ThumbnailState = { status: 'ready'; url: string } | { status: 'failed'; message: string };

export class ThumbnailGenerator {
  readonly #ferry: Ferry;
  readonly #made = new Map<string, string>();
  readonly #failed = new Set<string>();
  readonly #queued = new Set<string>();
  readonly #queue: string[] = [];
  readonly #pending = new Map<number, (reply: Reply) => void>();
  #worker: Worker | null | undefined;
  #active = 0;
  #seq = 0;
  readonly #off: () => void;
  readonly #listeners = new Set<() => void>();

  constructor(ferry: Ferry) {
    this.#ferry = ferry;
    this.#off = ferry.on('file-removed', (file) => this.#forget(file.id));
  }

  /** Whether a thumbnail for this file failed to be made ('cannot read image'). */
  failed(id: string): boolean {
    return this.#failed.has(id);
  }

  /** Called when a thumbnail fails (successes arrive through the engine's state). */
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Asks for a thumbnail of an image file; it arrives as the file's `preview`. */
  request(id: string): void {
    const file = this.#ferry.getFile(id);
    if (!file?.data || file.preview || this.#made.has(id) || this.#failed.has(id) || this.#queued.has(id)) return;
    if (!/^image\/(jpeg|png|gif|webp|bmp|avif)$/.test(file.type)) return;
    this.#queued.add(id);
    this.#queue.push(id);
    this.#pump();
  }

  /** Drops a file's thumbnail after its bytes changed (an edit); the next request makes a new one. */
  refresh(id: string): void {
    this.#forget(id);
    if (this.#ferry.getFile(id)?.preview) this.#ferry.setFileState(id, { preview: undefined });
  }

  destroy(): void {
    this.#off();
    this.#worker?.terminate();
    for (const url of this.#made.values()) URL.revokeObjectURL(url);
    this.#made.clear();
  }

  #forget(id: string): void {
    const url = this.#made.get(id);
    if (url) URL.revokeObjectURL(url);
    this.#made.delete(id);
    this.#failed.delete(id);
    this.#queued.delete(id);
  }

  #pump(): void {
    while (this.#active < 2 && this.#queue.length > 0) {
      const id = this.#queue.shift() as string;
      if (!this.#queued.has(id)) continue;
      this.#active += 1;
      void this.#make(id).finally(() => {
        this.#active -= 1;
        this.#queued.delete(id);
        this.#pump();
      });
    }
  }

  async #make(id: string): Promise<void> {
    const data = this.#ferry.getFile(id)?.data;
    if (!data) return;
    try {
      const blob = await this.#render(data);
      if (!this.#queued.has(id) || !this.#ferry.getFile(id)) return; // removed meanwhile
      const url = URL.createObjectURL(blob);
      this.#made.set(id, url);
      this.#ferry.setFileState(id, { preview: url });
    } catch {
      this.#failed.add(id);
      for (const listener of this.#listeners) listener();
    }
  }

  #render(data: Blob): Promise<Blob> {
    if (this.#worker === undefined) this.#worker = startWorker();
    const worker = this.#worker;
    if (!worker) return makeThumbnail(data, THUMBNAIL_WIDTH);
    const id = ++this.#seq;
    return new Promise((ok, fail) => {
      this.#pending.set(id, (reply) => (reply.blob ? ok(reply.blob) : fail(new Error(reply.error))));
      worker.onmessage = (e: MessageEvent<Reply>) => {
        const done = this.#pending.get(e.data.id);
        this.#pending.delete(e.data.id);
        done?.(e.data);
      };
      worker.postMessage({ id, blob: data, width: THUMBNAIL_WIDTH });
    });
  }
}

const generators = new WeakMap<Ferry, ThumbnailGenerator>();

/** The engine's generator, made once however often components mount (StrictMode-safe). */
export function thumbnailsFor(ferry: Ferry): ThumbnailGenerator {
  let generator = generators.get(ferry);
  if (!generator) {
    generator = new ThumbnailGenerator(ferry);
    generators.set(ferry, generator);
  }
  return generator;
}
