/** The 'Authorization required' view of a provider: why, and a button that opens the consent popup. */
import type { ProviderBrowser } from '@ferry/core';
import { useI18n } from '../i18n.ts';

export function ProviderAuth({
  browser,
  busy,
  error,
}: {
  browser: ProviderBrowser;
  busy: boolean;
  error: string | null;
}) {
  const t = useI18n();
  return (
    <div className="ferry-provider-auth">
      <h3 className="ferry-provider-auth-title">{t('authRequired')}</h3>
      <p>{t('authenticateWith', { provider: browser.name })}</p>
      {error && (
        <p className="ferry-provider-error" role="alert">
          {error}
        </p>
      )}
      <button
        type="button"
        className="ferry-button ferry-primary"
        disabled={busy}
        // The popup opens inside this click, so blockers let it through.
        onClick={() => void browser.connect()}
      >
        {busy ? t('connecting') : t('connectTo', { provider: browser.name })}
      </button>
    </div>
  );
}
