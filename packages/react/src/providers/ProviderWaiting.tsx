/**
 * A provider's rate limit as a wait, not an error: "Waiting for Dropbox… retrying in 12 s", counting
 * down. The live region is always in the page (a region added with its text is often not read)
 * and says each wait once; the visible countdown ticks without being announced every second.
 */
import type { Waiting } from '@ferry/core';
import { useI18n } from '../i18n.ts';

export function ProviderWaiting({ provider, waiting }: { provider: string; waiting: Waiting | null }) {
  const t = useI18n();
  return (
    <>
      <div className="ferry-visually-hidden" aria-live="polite" aria-atomic="true">
        {waiting ? t('waitingFor', { provider, seconds: waiting.retryAfter }) : ''}
      </div>
      {waiting && (
        <p className="ferry-provider-waiting" data-testid="ferry-provider-waiting">
          {t('waitingFor', { provider, seconds: waiting.seconds })}
        </p>
      )}
    </>
  );
}
