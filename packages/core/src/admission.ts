/**
 * Admission of new files: descriptor -> record, the page's `onBeforeFileAdded` veto, then the
 * restriction checks against running figures (O(1) per file). Refusals come back as data.
 */
import { createFile, type FileIndex, fileKey, newFileId } from './files.ts';
import type { LocaleVars } from './locale.ts';
import { checkFile, type Rejection } from './restrictions.ts';
import type { FerryFile, FileDescriptor, Restrictions } from './types.ts';

export interface AdmissionContext {
  restrictions: Restrictions;
  index: FileIndex;
  meta: Readonly<Record<string, string>>;
  onBeforeFileAdded?: (file: FerryFile) => boolean | FileDescriptor;
  i18n(key: string, vars?: LocaleVars): string;
}

export interface Admission {
  accepted: FerryFile[];
  /** Every refusal, with the descriptor it concerns; only restriction failures are shown. */
  rejected: { descriptor: FileDescriptor; rejection: Rejection; shown: boolean }[];
}

/** Admits what may be added; accepted files are entered in `ctx.index` as they pass. */
export function admit(descriptors: Iterable<FileDescriptor>, ctx: AdmissionContext): Admission {
  const result: Admission = { accepted: [], rejected: [] };
  for (const original of descriptors) {
    let descriptor = original;
    let file = createFile(descriptor, newFileId(), ctx.meta);
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
      file = createFile(descriptor, file.id, ctx.meta);
    }
    const key = fileKey(file);
    const rejection = checkFile(file, ctx.restrictions, ctx.index.figures(key), ctx.i18n);
    if (rejection) {
      result.rejected.push({ descriptor, rejection, shown: true });
      continue;
    }
    ctx.index.add(file, key);
    result.accepted.push(file);
  }
  return result;
}

/** One message for a batch of refusals: the first, plus how many more (no flood of toasts). */
export function rejectionSummary(rejections: Rejection[], i18n: AdmissionContext['i18n']): string | null {
  const first = rejections[0];
  if (!first) return null;
  if (rejections.length === 1) return first.message;
  return i18n('andNMore', { message: first.message, smart_count: rejections.length - 1 });
}
