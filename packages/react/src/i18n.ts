/**
 * Strings for the UI. Every string, the Dashboard's own included, is a key of the core's locale
 * table (`ferry.i18n`), so one language pack (`new Ferry({ locale: de })`) translates the
 * engine's messages and the Dashboard alike, and `ferry.setLocale` re-renders every component.
 */
import type { ActiveLocale } from '@ferry/core';
import { useCallback, useSyncExternalStore } from 'react';
import { useFerry } from './context.tsx';

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

/** The nearest engine's language (code and direction); re-renders when it changes. */
export function useLocale(): ActiveLocale {
  const ferry = useFerry();
  const subscribe = useCallback((onChange: () => void) => ferry.on('locale-change', onChange), [ferry]);
  return useSyncExternalStore(
    subscribe,
    () => ferry.locale,
    () => ferry.locale,
  );
}

/** The translate function of the nearest engine; a new one after each language switch. */
export function useI18n(): Translate {
  const ferry = useFerry();
  const locale = useLocale();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new function per locale re-renders memoised users
  return useCallback<Translate>((key, vars) => ferry.i18n(key, vars), [ferry, locale]);
}
