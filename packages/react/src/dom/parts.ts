/**
 * Hands files over in parts while a drop is still being read: the first part at once (so the
 * first rows show), then what came meanwhile in parts spaced by {@link partSpacing}. Each part
 * added to the engine is one state change whose cost grows with the files already there (the
 * file map is copied, recovery diffs it, the list re-renders), so parts are spaced in
 * proportion to the files handed over: adding stays a bounded share of the main thread while
 * the folder is read. With parts every 100 ms throughout, a 10,000-file folder took 9-10 s to
 * read instead of 8. Framework-free; the dropzone uses it.
 */
import type { FileDescriptor } from '@ferry/core';

/** Shortest spacing of parts, in ms: as often as the size reader commits (`sizing.ts`). */
export const PART_MS = 100;
/** Spacing added per 1,000 files handed over, in ms (10,000 files: a part every 500 ms). */
export const PART_MS_PER_1000 = 50;

/** How long to wait after a part when `delivered` files have been handed over. */
export function partSpacing(delivered: number): number {
  return Math.max(PART_MS, (delivered / 1000) * PART_MS_PER_1000);
}

export interface Parts {
  /** Files read; handed over now, or with the next part. */
  push(files: readonly FileDescriptor[]): void;
  /** Hands over what is waiting (the drop has been read to the end). */
  flush(): void;
}

export function createParts(
  deliver: (files: FileDescriptor[]) => void,
  now: () => number = () => performance.now(),
): Parts {
  let waiting: FileDescriptor[] = [];
  let delivered = 0;
  let deliveredAt: number | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const part = waiting;
    waiting = [];
    delivered += part.length;
    deliveredAt = now();
    deliver(part);
  };
  return {
    push(files) {
      for (const f of files) waiting.push(f);
      const spacing = partSpacing(delivered);
      const since = deliveredAt === null ? spacing : now() - deliveredAt;
      if (since >= spacing) flush();
      // Files that wait are handed over on time even if the reading stalls.
      else timer ??= setTimeout(flush, spacing - since);
    },
    flush,
  };
}
