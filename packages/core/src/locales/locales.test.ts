import { describe, expect, test } from 'vitest';
import { type LocaleEntry, type LocalePack, pluralCategory, translate } from '../locale.ts';
import { ar } from './ar.ts';
import { de } from './de.ts';
import { en } from './en.ts';
import { es } from './es.ts';
import { fr } from './fr.ts';
import { ja } from './ja.ts';
import { ptBR } from './pt-BR.ts';
import { zhCN } from './zh-CN.ts';

const packs: LocalePack[] = [de, fr, es, ptBR, ja, zhCN, ar];

const placeholders = (text: string) => [...text.matchAll(/%\{(\w+)\}/g)].map((m) => m[1]).sort();
const forms = (entry: LocaleEntry): string[] => (typeof entry === 'string' ? [entry] : Object.values(entry));

/** Everything wrong with `pack` measured against English; empty when it is complete. */
function problems(pack: LocalePack): string[] {
  const out: string[] = [];
  const reference = en.strings as Record<string, LocaleEntry>;
  const strings = pack.strings as Record<string, LocaleEntry>;
  const categories = new Intl.PluralRules(pack.code).resolvedOptions().pluralCategories.slice().sort();
  for (const key of Object.keys(reference)) if (!(key in strings)) out.push(`missing ${key}`);
  for (const [key, entry] of Object.entries(strings)) {
    const english = reference[key];
    if (english === undefined) {
      out.push(`extra ${key}`);
      continue;
    }
    if (typeof english === 'string' && typeof entry !== 'string') out.push(`${key} should be a string`);
    if (typeof english !== 'string') {
      if (typeof entry === 'string') out.push(`${key} should have plural forms`);
      else if (Object.keys(entry).sort().join() !== categories.join())
        out.push(`${key} has forms ${Object.keys(entry).sort()} instead of ${categories}`);
    }
    if (typeof entry !== 'string' && !placeholders(entry.other).includes('smart_count'))
      out.push(`${key}.other lost %{smart_count}`);
    // Every form keeps the English placeholders; a form may name its count in words instead.
    const wanted = placeholders(forms(english)[0] ?? '').filter((p) => p !== 'smart_count');
    for (const form of forms(entry)) {
      if (form.trim() === '') out.push(`${key} is empty`);
      const got = placeholders(form).filter((p) => p !== 'smart_count');
      if (got.join() !== wanted.join()) out.push(`${key} has placeholders ${got} instead of ${wanted}: ${form}`);
    }
  }
  return out;
}

describe('language packs', () => {
  test.each(packs.map((p) => [p.code, p] as const))(
    '%s has exactly the English keys, forms and placeholders',
    (_, pack) => {
      expect(problems(pack)).toEqual([]);
      expect(Intl.getCanonicalLocales(pack.code)).toEqual([pack.code]);
      expect(pack.direction).toBe(pack.code === 'ar' ? 'rtl' : 'ltr');
    },
  );

  test('the check fails on a missing key, an extra key, a lost placeholder and missing plural forms', () => {
    const { dropHint: _, ...rest } = de.strings;
    const broken = {
      ...de,
      strings: {
        ...rest,
        surplus: 'x',
        exceedsSize: 'zu groß',
        xFilesSelected: { other: '%{smart_count} Dateien' },
      },
    } as unknown as LocalePack;
    expect(problems(broken)).toEqual([
      'missing dropHint',
      'exceedsSize has placeholders  instead of file,size: zu groß',
      'xFilesSelected has forms other instead of one,other',
      'extra surplus',
    ]);
  });
});

describe('plural rules', () => {
  test('Arabic picks six forms by count', () => {
    const t = (n: number) => translate(ar.strings, 'xFilesSelected', { smart_count: n }, 'ar');
    expect([0, 1, 2, 3, 11, 100].map(t)).toEqual([
      'لم يُحدَّد أي ملف',
      'تم تحديد ملف واحد',
      'تم تحديد ملفين',
      'تم تحديد 3 ملفات',
      'تم تحديد 11 ملفًا',
      'تم تحديد 100 ملف',
    ]);
  });

  test('French counts zero as singular, English as plural; Japanese has one form', () => {
    expect(translate(fr.strings, 'xFilesSelected', { smart_count: 0 }, 'fr')).toBe('0 fichier sélectionné');
    expect(translate(en.strings, 'xFilesSelected', { smart_count: 0 })).toBe('0 files selected');
    expect(translate(ja.strings, 'uploadXFiles', { smart_count: 1 }, 'ja')).toBe('1 個のファイルをアップロード');
    expect(pluralCategory('pt-BR', 1_000_000)).toBe('many');
    expect(translate(ptBR.strings, 'xFilesSelected', { smart_count: 1_000_000 }, 'pt-BR')).toBe(
      '1000000 de arquivos selecionados',
    );
  });

  test('a form the language lacks falls back to other, a missing key to English, an unknown key to itself', () => {
    expect(translate({ x: { other: '%{smart_count} things' } }, 'x', { smart_count: 1 }, 'en')).toBe('1 things');
    expect(translate({}, 'dropHint', {}, 'de')).toBe('Drop your files here');
    expect(translate(de.strings, 'no-such-key')).toBe('no-such-key');
  });
});
