/**
 * One of Google's pickers as a Dashboard source: a button that opens Google's picker (after
 * Google's own sign-in popup the first time), and, for Google Photos, the link to the picking
 * session's page with a note that what is picked there arrives here by itself. Google's
 * refusals show as an alert. The state is the engine's (`ferry.providers.picker(id)`).
 */
import { useEffect, useSyncExternalStore } from 'react';
import { useFerry } from '../context.tsx';
import { useI18n } from '../i18n.ts';

export interface PickerPanelProps {
  /** `google-drive-picker` or `google-photos-picker`. */
  provider: string;
  /** Called after files were added (the Dashboard goes back to its file list). */
  onAdded?(count: number): void;
}

export function PickerPanel({ provider, onAdded }: PickerPanelProps) {
  const t = useI18n();
  const picker = useFerry().providers.picker(provider);
  const state = useSyncExternalStore(picker.subscribe, picker.getState, picker.getState);
  // Google's scripts load ahead of the click, so its sign-in popup opens inside the click.
  useEffect(() => void picker.prepare(), [picker]);
  const busy = state.status === 'authorizing' || state.status === 'picking' || state.status === 'adding';
  const open = () =>
    void picker.pick().then((added) => {
      if (added > 0) onAdded?.(added);
    });
  return (
    <div className="ferry-provider-auth ferry-picker" data-provider={provider} aria-busy={busy}>
      {state.error && (
        <p className="ferry-provider-error" role="alert">
          {state.error}
        </p>
      )}
      {state.pickerUri ? (
        <>
          <p>
            <a className="ferry-button ferry-primary" href={state.pickerUri} target="_blank" rel="noopener noreferrer">
              {t('pickerOpenTab', { provider: picker.name })}
            </a>
          </p>
          <p role="status">{t('pickerWaiting', { provider: picker.name })}</p>
          <button type="button" className="ferry-button" onClick={() => picker.cancel()}>
            {t('cancel')}
          </button>
        </>
      ) : (
        <button type="button" className="ferry-button ferry-primary" disabled={busy} onClick={open}>
          {busy ? t('connecting') : t('openPicker', { provider: picker.name })}
        </button>
      )}
    </div>
  );
}
