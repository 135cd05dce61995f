/**
 * The engine's recovery state for React: how many files came back after a reload, which are
 * ghosts and which need file access again; `null` when the engine runs without recovery.
 */
import type { RecoverySnapshot } from '@ferry/core';
import { useSyncExternalStore } from 'react';
import { useFerry } from '../context.tsx';

const none = () => () => undefined;
const nothing = () => null;

export function useRecovery(): RecoverySnapshot | null {
  const recovery = useFerry().recovery;
  return useSyncExternalStore(recovery?.subscribe ?? none, recovery?.getSnapshot ?? nothing);
}
