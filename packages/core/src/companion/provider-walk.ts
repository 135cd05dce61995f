/**
 * What a selected folder adds: its files, recursively. Folders are listed page by page to the
 * end, a few at a time (6, like Uppy, so a deep tree does not flood the companion), and the count
 * found so far is reported after every page so the browser can show it while it grows.
 */
import type { ProviderClient, ProviderItem } from './provider.ts';

/** A file found under a folder, with its path from (and including) that folder. */
export interface WalkedFile {
  item: ProviderItem;
  /** `Folder/sub/name.ext` */
  relativePath: string;
}

export interface WalkOptions {
  signal?: AbortSignal;
  /** Folders listed at once (default 6). */
  concurrency?: number;
  /** Which files count (supported, within restrictions...); all by default. */
  accept?(item: ProviderItem): boolean;
  /** Called with the number of accepted files found so far. */
  onCount?(count: number): void;
}

/** Lists `folder` and everything under it; resolves with its files in listing order per folder. */
export async function walkFolder(
  client: Pick<ProviderClient, 'pages'>,
  folder: ProviderItem,
  options: WalkOptions = {},
): Promise<WalkedFile[]> {
  const { signal, concurrency = 6, accept = () => true, onCount } = options;
  const files: WalkedFile[] = [];
  const queue: { path: string; dir: string }[] = [{ path: folder.requestPath, dir: folder.name }];
  let active = 0;
  return new Promise<WalkedFile[]>((resolve, reject) => {
    let failed = false;
    const listOne = async (entry: { path: string; dir: string }) => {
      for await (const page of client.pages(entry.path, signal)) {
        for (const item of page.items) {
          if (item.isFolder) queue.push({ path: item.requestPath, dir: `${entry.dir}/${item.name}` });
          else if (accept(item)) files.push({ item, relativePath: `${entry.dir}/${item.name}` });
        }
        onCount?.(files.length);
      }
    };
    const pump = () => {
      if (failed) return;
      if (queue.length === 0 && active === 0) {
        resolve(files);
        return;
      }
      while (active < concurrency && queue.length > 0) {
        const entry = queue.shift() as { path: string; dir: string };
        active += 1;
        listOne(entry).then(
          () => {
            active -= 1;
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
    };
    pump();
  });
}
