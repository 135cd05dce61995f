import { expect, test, vi } from 'vitest';
import { Ferry } from './ferry.ts';
import { ar } from './locales/ar.ts';
import { de } from './locales/de.ts';

const online = { isOnline: () => true };

test('a pack translates the engine, its plural rules included, and names its direction', () => {
  const ferry = new Ferry({ locale: ar, online });
  expect(ferry.locale).toMatchObject({ code: 'ar', direction: 'rtl' });
  expect(ferry.i18n('uploadXFiles', { smart_count: 2 })).toBe('رفع ملفين');
  ferry.destroy();
});

test('restriction messages come from the pack', () => {
  const ferry = new Ferry({ locale: de, online, restrictions: { maxNumberOfFiles: 1 } });
  const failed = vi.fn();
  ferry.on('restriction-failed', (_, rejection) => failed(rejection.message));
  ferry.addFiles([
    { data: new Blob(['a']), name: 'a.txt' },
    { data: new Blob(['b']), name: 'b.txt' },
  ]);
  expect(failed).toHaveBeenCalledWith('Sie können nur 1 Datei hochladen');
});

test('overrides: over a pack, or flat over English as before packs existed', () => {
  const withPack = new Ferry({ locale: { ...de, strings: { ...de.strings, dropHint: 'Hierher!' } }, online });
  expect(withPack.i18n('dropHint')).toBe('Hierher!');
  expect(withPack.i18n('cancel')).toBe('Abbrechen');
  const flat = new Ferry({ locale: { cancel: 'Stop', myPluginKey: 'Mine' }, online });
  expect(flat.i18n('cancel')).toBe('Stop');
  expect(flat.i18n('myPluginKey')).toBe('Mine');
  expect(flat.i18n('done')).toBe('Done');
  expect(flat.locale).toMatchObject({ code: 'en', direction: 'ltr' });
});

test('setLocale switches language and tells listeners', () => {
  const ferry = new Ferry({ online });
  const seen: string[] = [];
  ferry.on('locale-change', (locale) => seen.push(`${locale.code}:${locale.direction}`));
  const before = ferry.locale;
  ferry.setLocale(ar);
  expect(ferry.locale).not.toBe(before);
  expect(ferry.i18n('cancel')).toBe('إلغاء');
  ferry.setLocale(de);
  expect(seen).toEqual(['ar:rtl', 'de:ltr']);
  expect(ferry.i18n('cancel')).toBe('Abbrechen');
});
