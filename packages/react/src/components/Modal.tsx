/**
 * The Dashboard as a modal dialog: traps focus and gives it back, closes on Escape, the close
 * button and (optionally) a click outside, and can add a history entry so Back closes it; closed
 * any other way, it removes that entry again so history stays clean.
 */
import { type ReactNode, useEffect, useId, useRef } from 'react';
import { createPortal } from 'react-dom';
import { useI18n, useLocale } from '../i18n.ts';
import { icons } from './icons.tsx';

export interface ModalOptions {
  /** Modal only: whether it is open. */
  open?: boolean;
  /** Modal only: asked to close (Escape, close button, outside click, Back). */
  onRequestClose?(): void;
  closeOnClickOutside?: boolean;
  /** Push a history entry on open so the browser's Back closes the modal. */
  browserBackButtonClose?: boolean;
}

interface ModalProps extends ModalOptions {
  width: number | string;
  height: number | string;
  theme: string;
  children: ReactNode;
}

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([tabindex="-1"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

const cssSize = (v: number | string) => (typeof v === 'number' ? `${v}px` : v);

function focusables(root: HTMLElement): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
    (el) => !el.closest('[inert]') && el.offsetParent !== null,
  );
}

export function Modal({
  open = false,
  onRequestClose,
  closeOnClickOutside,
  browserBackButtonClose,
  width,
  height,
  theme,
  children,
}: ModalProps) {
  const t = useI18n();
  const locale = useLocale();
  const id = useId();
  const dialog = useRef<HTMLDivElement>(null);
  const close = useRef(onRequestClose);
  close.current = onRequestClose;

  // Focus: into the dialog on open, back to the trigger on close.
  useEffect(() => {
    if (!open) return;
    const previous = document.activeElement as HTMLElement | null;
    const first = dialog.current ? focusables(dialog.current)[0] : undefined;
    (first ?? dialog.current)?.focus();
    return () => previous?.focus?.();
  }, [open]);

  // History: one entry while open; Back pops it and closes, other ways of closing pop it too.
  useEffect(() => {
    if (!open || !browserBackButtonClose) return;
    const ours = () => (window.history.state as { ferryModal?: string } | null)?.ferryModal === id;
    if (!ours()) window.history.pushState({ ...(window.history.state ?? {}), ferryModal: id }, '');
    const onPop = () => {
      if (!ours()) close.current?.();
    };
    window.addEventListener('popstate', onPop);
    return () => {
      window.removeEventListener('popstate', onPop);
      if (ours()) window.history.back();
    };
  }, [open, browserBackButtonClose, id]);

  if (!open || typeof document === 'undefined') return null;

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape' && !e.defaultPrevented) {
      e.preventDefault();
      close.current?.();
      return;
    }
    if (e.key !== 'Tab' || !dialog.current) return;
    const items = focusables(dialog.current);
    const first = items[0];
    const last = items[items.length - 1];
    if (!first || !last) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };

  return createPortal(
    <div className="ferry-modal" data-theme={theme} dir={locale.direction} lang={locale.code}>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: the backdrop is a mouse-only shortcut; Escape and the close button are the accessible ways */}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: as above */}
      <div className="ferry-modal-backdrop" onClick={closeOnClickOutside ? () => close.current?.() : undefined} />
      <div
        ref={dialog}
        className="ferry-modal-dialog"
        role="dialog"
        aria-modal="true"
        aria-label={t('dashboardLabel')}
        tabIndex={-1}
        style={{ '--ferry-modal-w': cssSize(width), '--ferry-modal-h': cssSize(height) } as React.CSSProperties}
        onKeyDown={onKeyDown}
      >
        <button
          type="button"
          className="ferry-icon-button ferry-modal-close"
          aria-label={t('closeModal')}
          onClick={() => close.current?.()}
        >
          {icons.close}
        </button>
        {children}
      </div>
    </div>,
    document.body,
  );
}
