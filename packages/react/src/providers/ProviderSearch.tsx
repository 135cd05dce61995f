/** A search provider's bar (Unsplash): the query box and its Search button, in place of breadcrumbs and filter. */
import type { BrowserState, ProviderBrowser } from '@ferry/core';
import { useId, useState } from 'react';
import { useI18n } from '../i18n.ts';

export function ProviderSearch({ browser, state }: { browser: ProviderBrowser; state: BrowserState }) {
  const t = useI18n();
  const inputId = useId();
  // What is typed; the browser keeps what was last searched for (`state.query`).
  const [text, setText] = useState(state.query);
  const label = t('searchProvider', { provider: browser.name });
  return (
    // biome-ignore lint/a11y/useSemanticElements: the search landmark as a form role, which jsdom (the unit tests) knows; it has no <search> element yet
    <form
      className="ferry-provider-header ferry-provider-search"
      role="search"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        void browser.search(text);
      }}
    >
      <label htmlFor={inputId} className="ferry-visually-hidden">
        {label}
      </label>
      <input
        id={inputId}
        className="ferry-provider-filter"
        type="search"
        placeholder={label}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" className="ferry-button ferry-primary" disabled={text.trim() === ''}>
        {t('search')}
      </button>
    </form>
  );
}
