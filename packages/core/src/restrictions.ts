/**
 * Restrictions on what may be added: sizes, counts, types, duplicates. A rejection is data (a
 * stable `code` plus the translated message), never an exception thrown at the page.
 */
import type { LocaleVars } from './locale.ts';
import type { Restrictions } from './types.ts';

export type RestrictionCode =
  | 'max-file-size'
  | 'min-file-size'
  | 'max-total-file-size'
  | 'max-number-of-files'
  | 'min-number-of-files'
  | 'file-type'
  | 'duplicate'
  | 'rejected-by-callback';

/** Why a file (or an upload) was refused. */
export interface Rejection {
  code: RestrictionCode;
  message: string;
  /** Name of the refused file; absent for `min-number-of-files`. */
  fileName?: string;
}

/** A rejection as an Error, for callers that prefer to throw. */
export class RestrictionError extends Error {
  readonly code: RestrictionCode;
  constructor(rejection: Rejection) {
    super(rejection.message);
    this.name = 'RestrictionError';
    this.code = rejection.code;
  }
}

export const noRestrictions: Restrictions = {
  maxFileSize: null,
  minFileSize: null,
  maxTotalFileSize: null,
  maxNumberOfFiles: null,
  minNumberOfFiles: null,
  allowedFileTypes: null,
};

/** What the checker needs to know about a candidate. */
export interface Candidate {
  name: string;
  type: string;
  size: number | null;
}

/** The store's running figures the checker compares against (kept by the caller, O(1) to read). */
export interface StoreFigures {
  count: number;
  totalSize: number;
  isDuplicate: boolean;
}

type Translate = (key: string, vars?: LocaleVars) => string;

/** Checks one candidate; returns null when it may be added. */
export function checkFile(file: Candidate, r: Restrictions, figures: StoreFigures, t: Translate): Rejection | null {
  if (r.maxNumberOfFiles !== null && figures.count >= r.maxNumberOfFiles) {
    return rejectionOf(file, 'max-number-of-files', t('youCanOnlyUploadX', { smart_count: r.maxNumberOfFiles }));
  }
  if (r.allowedFileTypes && r.allowedFileTypes.length > 0 && !typeAllowed(file, r.allowedFileTypes)) {
    return rejectionOf(file, 'file-type', t('youCanOnlyUploadFileTypes', { types: r.allowedFileTypes.join(', ') }));
  }
  return checkSized(file, r, figures, t);
}

/**
 * The checks that need the file's size (and, for duplicates, its fingerprint): made with the
 * others when the size is known at once, or when a pending size arrives.
 */
export function checkSized(file: Candidate, r: Restrictions, figures: StoreFigures, t: Translate): Rejection | null {
  if (file.size !== null) {
    if (r.maxFileSize !== null && file.size > r.maxFileSize) {
      return rejectionOf(file, 'max-file-size', t('exceedsSize', { file: file.name, size: formatSize(r.maxFileSize) }));
    }
    if (r.minFileSize !== null && file.size < r.minFileSize) {
      return rejectionOf(
        file,
        'min-file-size',
        t('inferiorSize', { file: file.name, size: formatSize(r.minFileSize) }),
      );
    }
    if (r.maxTotalFileSize !== null && figures.totalSize + file.size > r.maxTotalFileSize) {
      return rejectionOf(
        file,
        'max-total-file-size',
        t('exceedsTotalSize', { file: file.name, size: formatSize(r.maxTotalFileSize) }),
      );
    }
  }
  if (figures.isDuplicate) return rejectionOf(file, 'duplicate', t('noDuplicates', { fileName: file.name }));
  return null;
}

function rejectionOf(file: Candidate, code: RestrictionCode, message: string): Rejection {
  return { code, message, fileName: file.name };
}

/** The check made when an upload starts: enough files? */
export function checkMinFiles(count: number, r: Restrictions, t: Translate): Rejection | null {
  if (r.minNumberOfFiles !== null && count < r.minNumberOfFiles) {
    return { code: 'min-number-of-files', message: t('youHaveToAtLeastSelectX', { smart_count: r.minNumberOfFiles }) };
  }
  return null;
}

/** `image/*` matches any image type, `.pdf` matches the name's extension, others match exactly. */
export function typeAllowed(file: Pick<Candidate, 'name' | 'type'>, allowed: readonly string[]): boolean {
  const type = file.type.toLowerCase();
  const name = file.name.toLowerCase();
  return allowed.some((pattern) => {
    const p = pattern.trim().toLowerCase();
    if (p.startsWith('.')) return name.endsWith(p);
    if (p.endsWith('/*')) return type.startsWith(p.slice(0, -1));
    return type === p;
  });
}

/** A key identifying the same file added twice (same source, path, name, type, size, mtime). */
export function fingerprint(d: {
  source: string;
  name: string;
  type: string;
  size: number | null;
  relativePath?: string;
  data: Blob | null;
  remoteKey?: string;
}): string {
  const modified = (d.data as Partial<File> | null)?.lastModified ?? '';
  return `${d.source}\u0000${d.relativePath ?? ''}\u0000${d.name}\u0000${d.type}\u0000${d.size ?? ''}\u0000${modified}\u0000${d.remoteKey ?? ''}`;
}

/** Bytes as a short human figure (1024 steps: 1023 B, 1.5 KB, 12 MB), '?' when unknown; every size shown. */
export function formatSize(bytes: number | null): string {
  if (bytes === null) return '?';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const rounded = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded} ${units[unit]}`;
}
