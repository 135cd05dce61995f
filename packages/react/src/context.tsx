/** Hands a {@link Ferry} instance to the components below, and reads its state with selectors. */
import type { Ferry, FerryState } from '@ferry/core';
import { createContext, type ReactNode, useContext, useSyncExternalStore } from 'react';
import { framedSubscribe } from './changes.ts';

const FerryContext = createContext<Ferry | null>(null);

export function FerryProvider({ ferry, children }: { ferry: Ferry; children: ReactNode }) {
  return <FerryContext.Provider value={ferry}>{children}</FerryContext.Provider>;
}

/** The Ferry instance of the nearest {@link FerryProvider}. */
export function useFerry(): Ferry {
  const ferry = useContext(FerryContext);
  if (!ferry) throw new Error('useFerry: wrap this component in <FerryProvider ferry={...}>');
  return ferry;
}

/**
 * A slice of the engine's state. The component re-renders only when the selected value changes
 * (by `Object.is`), so selectors should return stored objects or primitives. Changes are heard
 * at most once per frame (see `changes.ts`).
 */
export function useFerryState<T>(selector: (state: FerryState) => T): T {
  const ferry = useFerry();
  return useSyncExternalStore(
    framedSubscribe(ferry),
    () => selector(ferry.getState()),
    () => selector(ferry.getState()),
  );
}
