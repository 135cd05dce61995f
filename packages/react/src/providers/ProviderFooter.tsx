/** The selection bar: how many files the selection adds (folders counted as they are listed), Cancel and Add. */
import type { BrowserState, ProviderBrowser } from '@ferry/core';
import { useI18n } from '../i18n.ts';

export interface ProviderFooterProps {
  browser: ProviderBrowser;
  state: BrowserState;
  onAdded?(count: number): void;
}

export function ProviderFooter({ browser, state, onAdded }: ProviderFooterProps) {
  const t = useI18n();
  // Read through the browser: the summary depends on `selected` and `folders`, both in `state`.
  const summary = state.selected.size === 0 ? null : browser.summary();
  return (
    <div className="ferry-provider-footer">
      <span className="ferry-provider-count" role="status" aria-live="polite">
        {summary
          ? `${t('xFilesSelected', { smart_count: summary.total })}${summary.counting ? ` · ${t('countingFiles')}` : ''}`
          : ''}
      </span>
      {summary && (
        <>
          <button type="button" className="ferry-button" onClick={() => browser.clearSelection()}>
            {t('cancel')}
          </button>
          <button
            type="button"
            className="ferry-button ferry-primary"
            disabled={state.adding}
            onClick={async () => {
              const { added } = await browser.addSelected();
              if (added > 0) onAdded?.(added);
            }}
          >
            {state.adding ? t('countingFiles') : t('addSelected', { smart_count: summary.total })}
          </button>
        </>
      )}
    </div>
  );
}
