/**
 * How the engine and its UI find their words: a locale is a pack (`@ferry/core/locales/de`...)
 * with its BCP 47 code, its writing direction and one entry per {@link LocaleKey}. `%{name}`
 * placeholders are filled from the variables passed to {@link translate}; a plural entry holds
 * one form per CLDR plural category and is chosen by `smart_count` through `Intl.PluralRules`
 * of the pack's language (Arabic has six forms, Japanese one).
 */
import { strings as english } from './locales/en.ts';

/** A CLDR plural form; `other` is the one every language has. */
export type PluralCategory = 'zero' | 'one' | 'two' | 'few' | 'many' | 'other';

/** A plural entry: the forms the language's plural rules name (`other` always). */
export type PluralEntry = Partial<Record<PluralCategory, string>> & { other: string };

/** A string, or plural forms chosen by the `smart_count` variable. */
export type LocaleEntry = string | PluralEntry;

export type LocaleKey = keyof typeof english;
/** A complete table: every key the English pack has, no other. */
export type LocaleStrings = Record<LocaleKey, LocaleEntry>;
/** Entries replacing some of a pack's; keys outside the table are allowed for plugins. */
export type LocaleOverrides = Partial<Record<LocaleKey | (string & {}), LocaleEntry>>;
export type LocaleVars = Record<string, string | number>;
export type Direction = 'ltr' | 'rtl';

/** A language pack: what `@ferry/core/locales/*` export. */
export interface LocalePack {
  /** BCP 47 tag, e.g. `de`, `pt-BR`; picks the plural rules. */
  code: string;
  direction: Direction;
  strings: LocaleStrings;
}

/**
 * What `new Ferry({ locale })` takes: a pack, a pack with some strings replaced
 * (`{ ...de, strings: { ...de.strings, dropHint: '…' } }`, or only `{ strings: {...} }`), or,
 * as before packs existed, a flat table of overrides over English.
 */
export type LocaleOption = LocaleOverrides | { code?: string; direction?: Direction; strings: LocaleOverrides };

/** The English table, every key (kept under its old name). */
export const defaultLocale: LocaleStrings = english;

/** The language a widget speaks: its code and direction (the Dashboard sets `lang` and `dir`). */
export interface ActiveLocale {
  readonly code: string;
  readonly direction: Direction;
}

/** A resolved locale: code, direction and the full table (the pack's entries over English). */
export interface Locale extends ActiveLocale {
  readonly strings: LocaleOverrides;
}

/** Resolves what a page passed into a full {@link Locale}; English when nothing. */
export function resolveLocale(option?: LocaleOption): Locale {
  if (!option) return { code: 'en', direction: 'ltr', strings: english };
  if (isPackLike(option)) {
    return {
      code: option.code ?? 'en',
      direction: option.direction ?? 'ltr',
      strings: { ...english, ...option.strings },
    };
  }
  return { code: 'en', direction: 'ltr', strings: { ...english, ...option } };
}

function isPackLike(
  option: LocaleOption,
): option is { code?: string; direction?: Direction; strings: LocaleOverrides } {
  const s = (option as { strings?: unknown }).strings;
  return typeof s === 'object' && s !== null;
}

const rules = new Map<string, Intl.PluralRules>();

/** The plural form `count` takes in language `code` (CLDR rules through `Intl.PluralRules`). */
export function pluralCategory(code: string, count: number): PluralCategory {
  let r = rules.get(code);
  if (!r) {
    r = new Intl.PluralRules(code);
    rules.set(code, r);
  }
  return r.select(count);
}

/**
 * Looks `key` up in `strings` (then English) and fills its placeholders; unknown keys come back
 * as the key. Plural forms follow the rules of `code` (English by default).
 */
export function translate(strings: LocaleOverrides, key: string, vars: LocaleVars = {}, code = 'en'): string {
  const entry = strings[key] ?? (english as LocaleOverrides)[key];
  if (entry === undefined) return key;
  const text = typeof entry === 'string' ? entry : pickForm(entry, Number(vars.smart_count ?? 0), code);
  return text.replace(/%\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

function pickForm(entry: PluralEntry, count: number, code: string): string {
  return entry[pluralCategory(code, count)] ?? entry.other;
}
