/**
 * A cloud provider as a Dashboard source: the 'Authorization required' view until connected,
 * then the file browser (header, items, selection bar); a search provider (Unsplash) has the
 * search bar instead of sign-in and folders; a form sign-in provider (WebDAV) asks for its server
 * URL instead of opening the popup. A rate limit shows as a wait with its countdown. The
 * state is the engine's (`ferry.providers.browser(id)`), so leaving the panel and coming back
 * keeps folder and selection.
 */
import { useEffect } from 'react';
import { useI18n } from '../i18n.ts';
import { ProviderAuth } from './ProviderAuth.tsx';
import { ProviderFooter } from './ProviderFooter.tsx';
import { ProviderForm } from './ProviderForm.tsx';
import { ProviderHeader } from './ProviderHeader.tsx';
import { ProviderItems } from './ProviderItems.tsx';
import { ProviderSearch } from './ProviderSearch.tsx';
import { ProviderWaiting } from './ProviderWaiting.tsx';
import { useProviderBrowser } from './useProviderBrowser.ts';

export interface ProviderPanelProps {
  /** The provider id: `drive`, `instagram`. */
  provider: string;
  /** Called after files were added (the Dashboard goes back to its file list). */
  onAdded?(count: number): void;
}

export function ProviderPanel({ provider, onAdded }: ProviderPanelProps) {
  const t = useI18n();
  const [browser, state] = useProviderBrowser(provider);
  useEffect(() => browser.start(), [browser]);
  const search = browser.searchable;
  if (!search && (state.status === 'idle' || state.status === 'auth' || state.status === 'connecting')) {
    const busy = state.status === 'connecting';
    if (browser.simpleAuth) return <ProviderForm browser={browser} busy={busy} error={state.error} />;
    return <ProviderAuth browser={browser} busy={state.status === 'connecting'} error={state.error} />;
  }
  return (
    <div className="ferry-provider" data-provider={provider} aria-busy={state.status === 'loading'}>
      {search ? <ProviderSearch browser={browser} state={state} /> : <ProviderHeader browser={browser} state={state} />}
      <ProviderWaiting provider={browser.name} waiting={state.waiting} />
      {state.status === 'loading' && !state.waiting && (
        <p className="ferry-provider-loading" role="status">
          {t('loading')}
        </p>
      )}
      {state.status === 'error' && (
        <div className="ferry-provider-loading" role="alert">
          <p>{state.error}</p>
          <button type="button" className="ferry-button" onClick={() => void browser.goTo(state.crumbs.length - 1)}>
            {t('retry')}
          </button>
        </div>
      )}
      {search && state.query === '' && state.status !== 'loading' ? (
        <p className="ferry-provider-empty">{t('searchPrompt')}</p>
      ) : (
        state.status === 'ready' && <ProviderItems browser={browser} state={state} />
      )}
      <ProviderFooter browser={browser} state={state} onAdded={onAdded} />
    </div>
  );
}
