/**
 * Admission of new files: descriptor -> record, the page's `onBeforeFileAdded` veto, then the
 * restriction checks against running figures (O(1) per file). Refusals come back as data.
 * With `deferSizes`, files with bytes are admitted with their size pending, on every check that
 * needs no size; {@link admitSize} makes the rest when the size is read.
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
