/** A view that slides over the Dashboard (250 ms; none with reduced motion), with a Back button. */
import { type ReactNode, useEffect, useRef } from 'react';
import { useI18n } from '../i18n.ts';
import { icons } from './icons.tsx';

export interface PanelProps {
  title: string;
  onBack(): void;
  children: ReactNode;
  name: string;
}

export function Panel({ title, onBack, children, name }: PanelProps) {
  const t = useI18n();
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    // Move focus into the panel unless something inside already took it (autoFocus).
    if (ref.current && !ref.current.contains(document.activeElement)) ref.current.focus();
  }, []);
  return (
    <section className="ferry-panel" data-panel={name} aria-label={title} ref={ref} tabIndex={-1}>
      <header className="ferry-panel-header">
        <button type="button" className="ferry-button ferry-back" onClick={onBack}>
          {icons.back}
          {t('back')}
        </button>
        <h2 className="ferry-panel-title">{title}</h2>
      </header>
      <div className="ferry-panel-body">{children}</div>
    </section>
  );
}
