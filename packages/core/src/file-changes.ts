/**
 * Which files a state change changed, kept beside the file maps the reducer makes, so that a
 * follower of the store (recovery's journal) can tell what changed since the map it last saw in
 * O(changed) rather than by comparing every file. While a large pick's sizes are read, the store
 * changes every 250 ms, each time for a few hundred of 10,000 files: comparing them all each time
 * made the follower's work grow with the square of the batch.
 *
 * Each map made by a change that lists what it changed points back to the map it came from;
 * weakly, so that the history of a long session is not kept alive by its last map. A change that
 * lists nothing (adding files, whose order the follower needs) breaks the chain: the follower then
 * compares everything, as before.
 */
import type { FerryFile } from './types.ts';

type Files = Readonly<Record<string, FerryFile>>;

interface Step {
  previous: WeakRef<Files>;
  ids: readonly string[];
}

const steps = new WeakMap<Files, Step>();

/** Most steps walked back before giving up (a follower that fell this far behind compares all). */
const MAX_STEPS = 256;

/** Notes that `next` is `previous` with (at most) the files `ids` changed, added or removed. */
export function noteChanged(next: Files, previous: Files, ids: readonly string[]): void {
  if (next !== previous) steps.set(next, { previous: new WeakRef(previous), ids });
}

/**
 * The ids of the files that may differ between `since` and `files` (each once; a listed file may
 * also be unchanged), or undefined when that is not known: some change between them listed
 * nothing, or `since` is not an earlier map of this store.
 */
export function changedSince(files: Files, since: Files): string[] | undefined {
  if (files === since) return [];
  const lists: (readonly string[])[] = [];
  let at: Files | undefined = files;
  for (let n = 0; at !== since; n += 1) {
    const step: Step | undefined = n < MAX_STEPS && at ? steps.get(at) : undefined;
    if (!step) return undefined;
    lists.push(step.ids);
    at = step.previous.deref();
  }
  if (lists.length === 1) return [...new Set(lists[0])];
  const ids = new Set<string>();
  for (const list of lists) for (const id of list) ids.add(id);
  return [...ids];
}
