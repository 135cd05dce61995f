/**
 * Admission of new files: descriptor -> record, the page's `onBeforeFileAdded` veto, then the
 * restriction checks against running figures (O(1) per file). Refusals come back as data.
 * With `deferSizes`, files with bytes are admitted with their size pending, on every check that
 * needs no size; {@link admitSize} makes the rest when the size is read. {@link Intake} is the
 * engine's pipeline around it: whether a batch defers its sizes, recovery's claim on files that
 * may bring a ghost back, then admission, in one state change per batch.
 */
import { createFile, type FileIndex, fileKey, newFileId } from './files.ts';
import type { LocaleVars } from './locale.ts';
import { checkFile, checkSized, type Rejection } from './restrictions.ts';
import type { FerryFile, FileDescriptor, Restrictions } from './types.ts';

export interface AdmissionContext {
  restrictions: Restrictions;
  index: FileIndex;
  meta: Readonly<Record<string, string>>;
  onBeforeFileAdded?: (file: FerryFile) => boolean | FileDescriptor;
  i18n(key: string, vars?: LocaleVars): string;
  /** Leave sizes of files with bytes unread (`sizePending`); they are checked by {@link admitSize}. */
  deferSizes?: boolean;
}

export interface Admission {
  accepted: FerryFile[];
  /** Every refusal, with the descriptor it concerns; only restriction failures are shown. */
  rejected: { descriptor: FileDescriptor; rejection: Rejection; shown: boolean }[];
  /**
   * The descriptor each accepted file came from (after `onBeforeFileAdded`), at the same index
   * as the file: an array, not a map by id, because this runs for every picked file while the
   * page waits (10,000 insertions into a map are several ms of the pick in Chromium).
   */
  sources: FileDescriptor[];
}

/** Admits what may be added; accepted files are entered in `ctx.index` as they pass. */
export function admit(descriptors: Iterable<FileDescriptor>, ctx: AdmissionContext): Admission {
  const result: Admission = { accepted: [], rejected: [], sources: [] };
  const defer = ctx.deferSizes === true;
  for (const original of descriptors) {
    let descriptor = original;
    let file = createFile(descriptor, newFileId(), ctx.meta, defer);
    const verdict = ctx.onBeforeFileAdded?.(file);
    if (verdict === false) {
      const message = ctx.i18n('rejectedByCallback', { file: file.name });
      result.rejected.push({
        descriptor,
        rejection: { code: 'rejected-by-callback', message, fileName: file.name },
        shown: false,
      });
      continue;
    }
    if (verdict && typeof verdict === 'object') {
      descriptor = { ...descriptor, ...verdict };
      file = createFile(descriptor, file.id, ctx.meta, defer);
    }
    // The fingerprint reads the size and the modification time: not while the size is pending.
    const key = file.sizePending ? null : fileKey(file);
    const rejection = checkFile(file, ctx.restrictions, ctx.index.figures(key), ctx.i18n);
    if (rejection) {
      result.rejected.push({ descriptor, rejection, shown: true });
      continue;
    }
    ctx.index.add(file, key);
    result.accepted.push(file);
    result.sources.push(descriptor);
  }
  return result;
}

/**
 * Reads the size of a file admitted with its size pending and makes the checks that need it;
 * the size, or the rejection (the file then leaves `ctx.index`).
 */
export function admitSize(
  file: FerryFile,
  ctx: Pick<AdmissionContext, 'restrictions' | 'index' | 'i18n'>,
): { size: number } | { rejection: Rejection } {
  const size = file.data?.size ?? 0;
  const sized: FerryFile = { ...file, size };
  const key = fileKey(sized);
  const rejection = checkSized(sized, ctx.restrictions, ctx.index.figures(key), ctx.i18n);
  if (rejection) {
    ctx.index.remove(file);
    return { rejection };
  }
  ctx.index.settle(file.id, size, key);
  return { size };
}

/** What the engine's intake needs from it (`ferry.ts`). */
export interface IntakeHost extends Omit<AdmissionContext, 'meta' | 'deferSizes'> {
  /** The global meta now (merged into each new file's). */
  meta(): Readonly<Record<string, string>>;
  /** Whether sizes of an earlier batch are still being read (a batch then queues behind it). */
  sizing(): boolean;
  /** Batches of more local files than this come in with sizes pending (`sizing.eagerUpTo`). */
  readonly eagerUpTo: number;
  /** Recovery's claim: takes the files that may bring a ghost's bytes back, returns the others. */
  claim?(descriptors: FileDescriptor[], deferSizes: boolean): FileDescriptor[];
  /** Tells of refused files (events, one toast). */
  refused(rejected: Admission['rejected']): void;
  /** Puts accepted files into the store in one state change (events, size reads, auto upload). */
  added(files: FerryFile[], sources: FileDescriptor[], deferSizes: boolean): void;
  /** The ids a batch added (none, too): small files' bytes are read ahead. */
  admitted(ids: string[]): void;
}

/** The engine's path for new files: `addFiles`, and files recovery finds to be no ghost's. */
export class Intake {
  readonly #host: IntakeHost;

  constructor(host: IntakeHost) {
    this.#host = host;
  }

  /** Adds a batch (see `Ferry.addFiles`); the ids of the files added. */
  add(descriptors: Iterable<FileDescriptor>): string[] {
    // This runs in the task that delivers a pick of 10,000 files: one pass per step, no copies.
    const all = Array.isArray(descriptors) ? descriptors : [...descriptors];
    // Decided on the whole batch: recovery must not read sizes either when they are deferred.
    const deferSizes = this.defersSizes(all);
    // Recovery takes the files that may bring a ghost's bytes back (and notes picked handles).
    return this.admit(this.#host.claim ? this.#host.claim(all, deferSizes) : all, deferSizes);
  }

  /** Whether a batch comes in with sizes pending (see `sizing.ts`). */
  defersSizes(descriptors: readonly FileDescriptor[]): boolean {
    return this.#host.sizing() || moreWithBytes(descriptors, this.#host.eagerUpTo);
  }

  /** Admits new files (past recovery) in one state change; their ids. */
  admit(fresh: readonly FileDescriptor[], deferSizes: boolean): string[] {
    const host = this.#host;
    const { accepted, rejected, sources } = admit(fresh, {
      restrictions: host.restrictions,
      index: host.index,
      meta: host.meta(),
      onBeforeFileAdded: host.onBeforeFileAdded,
      i18n: host.i18n,
      deferSizes,
    });
    host.refused(rejected);
    if (accepted.length > 0) host.added(accepted, sources, deferSizes);
    const ids = accepted.map((f) => f.id);
    host.admitted(ids);
    return ids;
  }
}

/**
 * Whether more than `limit` descriptors carry bytes (the ones whose size a browser may look up
 * on disk); stops counting there.
 */
function moreWithBytes(descriptors: readonly FileDescriptor[], limit: number): boolean {
  let n = 0;
  for (const d of descriptors) {
    if (d.data) n += 1;
    if (n > limit) return true;
  }
  return false;
}
