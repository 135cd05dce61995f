/** The browser's top bar: breadcrumbs, the name filter, list/grid switch, the account and Log out. */
import type { BrowserState, ProviderBrowser } from '@ferry/core';
import { useId } from 'react';
import { useI18n } from '../i18n.ts';

export function ProviderHeader({ browser, state }: { browser: ProviderBrowser; state: BrowserState }) {
  const t = useI18n();
  const filterId = useId();
  const last = state.crumbs.length - 1;
  return (
    <div className="ferry-provider-header">
      <nav className="ferry-breadcrumbs" aria-label={t('breadcrumbs')}>
        <ol>
          {state.crumbs.map((crumb, i) => (
            <li
              key={state.crumbs
                .slice(0, i + 1)
                .map((c) => c.requestPath)
                .join('/')}
            >
              {i === last ? (
                <span aria-current="page">{crumb.name}</span>
              ) : (
                <button type="button" className="ferry-crumb" onClick={() => void browser.goTo(i)}>
                  {crumb.name}
                </button>
              )}
            </li>
          ))}
        </ol>
      </nav>
      <div className="ferry-provider-tools">
        <label htmlFor={filterId} className="ferry-visually-hidden">
          {t('filterByName')}
        </label>
        <input
          id={filterId}
          className="ferry-provider-filter"
          type="search"
          placeholder={t('filterByName')}
          value={state.filter}
          onChange={(e) => browser.setFilter(e.target.value)}
        />
        <button
          type="button"
          className="ferry-button"
          aria-pressed={state.view === 'list'}
          onClick={() => browser.setView('list')}
        >
          {t('listView')}
        </button>
        <button
          type="button"
          className="ferry-button"
          aria-pressed={state.view === 'grid'}
          onClick={() => browser.setView('grid')}
        >
          {t('gridView')}
        </button>
        {state.username && <span className="ferry-provider-user">{state.username}</span>}
        <button type="button" className="ferry-button" onClick={() => void browser.logout()}>
          {t('logOut')}
        </button>
      </div>
    </div>
  );
}
