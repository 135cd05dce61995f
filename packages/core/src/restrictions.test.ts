import { describe, expect, test } from 'vitest';
import { translate } from './locale.ts';
import { checkFile, checkMinFiles, noRestrictions, typeAllowed } from './restrictions.ts';

const t = (key: string, vars?: Record<string, string | number>) => translate({}, key, vars);
const none = { count: 0, totalSize: 0, isDuplicate: false };
const file = (name: string, type: string, size: number | null) => ({ name, type, size });

describe('restrictions', () => {
  test('nothing is restricted by default', () => {
    expect(
      checkFile(file('a.exe', 'application/x-msdownload', 10 ** 12), noRestrictions, { ...none, count: 10 ** 6 }, t),
    ).toBeNull();
  });

  test('each limit rejects with its code and the catalogue message', () => {
    const r = { ...noRestrictions, maxFileSize: 1024, minFileSize: 10, maxTotalFileSize: 2048, maxNumberOfFiles: 2 };
    expect(checkFile(file('big.bin', '', 1025), r, none, t)).toEqual({
      code: 'max-file-size',
      message: 'big.bin exceeds maximum allowed size of 1 KB',
      fileName: 'big.bin',
    });
    expect(checkFile(file('tiny', '', 9), r, none, t)?.code).toBe('min-file-size');
    expect(checkFile(file('tiny', '', 9), r, none, t)?.message).toBe(
      'This file is smaller than the allowed size of 10 B',
    );
    expect(checkFile(file('c', '', 1000), r, { ...none, totalSize: 1049 }, t)?.code).toBe('max-total-file-size');
    expect(checkFile(file('c', '', 1000), r, { ...none, totalSize: 1048 }, t)).toBeNull();
    expect(checkFile(file('c', '', 1), r, { ...none, count: 2 }, t)).toMatchObject({
      code: 'max-number-of-files',
      message: 'You can only upload 2 files',
    });
    expect(checkFile(file('c', '', 1), { ...r, maxNumberOfFiles: 1 }, { ...none, count: 1 }, t)?.message).toBe(
      'You can only upload 1 file',
    );
    expect(checkFile(file('d', '', 100), r, { ...none, isDuplicate: true }, t)).toMatchObject({
      code: 'duplicate',
      message: 'Cannot add the duplicate file ‘d’, it already exists',
    });
  });

  test('unknown sizes skip the size checks', () => {
    const r = { ...noRestrictions, maxFileSize: 1, minFileSize: 1, maxTotalFileSize: 1 };
    expect(checkFile(file('remote', '', null), r, none, t)).toBeNull();
  });

  test('types: MIME wildcards, exact MIME and extensions, case-insensitive', () => {
    const allowed = ['image/*', '.PDF', 'text/csv'];
    expect(typeAllowed({ name: 'a.png', type: 'image/png' }, allowed)).toBe(true);
    expect(typeAllowed({ name: 'doc.pdf', type: '' }, allowed)).toBe(true);
    expect(typeAllowed({ name: 'x.csv', type: 'text/csv' }, allowed)).toBe(true);
    expect(typeAllowed({ name: 'x.txt', type: 'text/plain' }, allowed)).toBe(false);
    expect(typeAllowed({ name: 'imagepdf', type: 'imagex/png' }, allowed)).toBe(false);
    const r = { ...noRestrictions, allowedFileTypes: allowed };
    expect(checkFile(file('x.txt', 'text/plain', 1), r, none, t)).toEqual({
      code: 'file-type',
      message: 'You can only upload: image/*, .PDF, text/csv',
      fileName: 'x.txt',
    });
  });

  test('minimum number of files is checked at upload', () => {
    const r = { ...noRestrictions, minNumberOfFiles: 3 };
    expect(checkMinFiles(2, r, t)).toEqual({
      code: 'min-number-of-files',
      message: 'You have to select at least 3 files',
    });
    expect(checkMinFiles(3, r, t)).toBeNull();
    expect(checkMinFiles(0, noRestrictions, t)).toBeNull();
  });
});
