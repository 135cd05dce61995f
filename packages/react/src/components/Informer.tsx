/** Toasts from the engine's informer queue; errors are announced assertively and offer details. */
import type { InfoMessage } from '@ferry/core';
import { useState } from 'react';
import { useFerry, useFerryState } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { icons } from './icons.tsx';

export function Informer() {
  const info = useFerryState((s) => s.info);
  return (
    <div className="ferry-informer" aria-live="polite">
      {info.map((message) => (
        <Toast key={message.id} message={message} />
      ))}
    </div>
  );
}

function Toast({ message }: { message: InfoMessage }) {
  const ferry = useFerry();
  const t = useI18n();
  const [open, setOpen] = useState(false);
  const urgent = message.type === 'error' || message.type === 'warning';
  return (
    <div className="ferry-toast" data-type={message.type} role={urgent ? 'alert' : 'status'} data-testid="ferry-toast">
      <span className="ferry-toast-message">{message.message}</span>
      {message.details && (
        <button type="button" className="ferry-toast-more" aria-expanded={open} onClick={() => setOpen(!open)}>
          {t('details')}
        </button>
      )}
      <button
        type="button"
        className="ferry-icon-button"
        aria-label={t('dismiss')}
        onClick={() => ferry.hideInfo(message.id)}
      >
        {icons.close}
      </button>
      {open && message.details && <p className="ferry-toast-details">{message.details}</p>}
    </div>
  );
}
