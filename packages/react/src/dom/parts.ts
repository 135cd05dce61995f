/**
 * Hands files over in parts while a drop is still being read: the first part at once (so the
 * first rows show), then what came meanwhile at most every `everyMs`. Each part added to the
 * engine is one state change whose cost grows with the files already there (the file map is
 * copied, the list re-renders), so a folder of 10,000 files is added in a few dozen parts, not
 * in one per `readEntries` batch of 100. Framework-free; the dropzone uses it.
 */
import type { FileDescriptor } from '@ferry/core';

/** Default spacing of parts, in ms: as often as the size reader commits (`sizing.ts`). */
export const PART_MS = 100;

export interface Parts {
  /** Files read; handed over now, or with the next part. */
  push(files: readonly FileDescriptor[]): void;
  /** Hands over what is waiting (the drop has been read to the end). */
  flush(): void;
}

export function createParts(
  deliver: (files: FileDescriptor[]) => void,
  everyMs = PART_MS,
  now: () => number = () => performance.now(),
): Parts {
  let waiting: FileDescriptor[] = [];
  let deliveredAt: number | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const part = waiting;
    waiting = [];
    deliveredAt = now();
    deliver(part);
  };
  return {
    push(files) {
      for (const f of files) waiting.push(f);
      const since = deliveredAt === null ? everyMs : now() - deliveredAt;
      if (since >= everyMs) flush();
      // Files that wait are handed over on time even if the reading stalls.
      else timer ??= setTimeout(flush, everyMs - since);
    },
    flush,
  };
}
