/**
 * Binds React to a provider's browser (state kept in `@ferry/core`, one per provider on the
 * engine): `useProviderBrowser` reads its state with `useSyncExternalStore`, and
 * `useProviderList` resolves the Dashboard's `providers` option (a list of ids, or `true` for
 * what the companion says it enables) into provider descriptions, leaving out Google's pickers
 * when the page has no Google app for them.
 */
import type { BrowserState, ProviderBrowser, ProviderInfo } from '@ferry/core';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { useFerry } from '../context.tsx';

/** The browser of provider `id` and its current state. */
export function useProviderBrowser(id: string): [ProviderBrowser, BrowserState] {
  const ferry = useFerry();
  const browser = ferry.providers.browser(id);
  const state = useSyncExternalStore(browser.subscribe, browser.getState, browser.getState);
  return [browser, state];
}

/** `['drive', 'instagram']` as given, `true` as the companion's answer (`GET /providers`). */
export function useProviderList(option: readonly string[] | boolean | undefined): ProviderInfo[] {
  const ferry = useFerry();
  const explicit = Array.isArray(option) ? option : null;
  const [discovered, setDiscovered] = useState<ProviderInfo[]>([]);
  useEffect(() => {
    if (option !== true) return;
    let live = true;
    void ferry.providers.discover().then((list) => {
      if (live) setDiscovered(list);
    });
    return () => {
      live = false;
    };
  }, [ferry, option]);
  if (explicit) return explicit.map((id) => ferry.providers.info(id)).filter((p) => ferry.providers.usable(p));
  return option === true ? discovered : [];
}
