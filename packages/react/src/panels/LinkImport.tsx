/** The link-import panel: a URL box and an Import button; the file is added as a remote file. */
import { type Ferry, importLink, type LinkErrorCode } from '@ferry/core';
import { type FormEvent, useId, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { useI18n } from '../i18n.ts';

export interface LinkImportProps {
  /** @deprecated Set `companionUrl` on the engine (`new Ferry({ companionUrl })`); this overrides it. */
  companionUrl?: string;
  /** Called with the new file's id after a successful import. */
  onImported?(id: string): void;
  /** A URL to import straight away (e.g. pasted into the Dashboard). */
  initialUrl?: string;
}

/**
 * The toast for each failure: the companion answering that it could not fetch the file is
 * 'Failed to fetch the file', a call that fails altogether 'Companion failed to fetch this URL'.
 */
const messages: Record<LinkErrorCode, string> = {
  'invalid-url': 'incorrectUrl',
  'fetch-failed': 'failedToFetchFile',
  'companion-error': 'failedToFetch',
};

/** Imports `raw` through the core's `importLink`; failures toast for 4 s. The new file's id, or null. */
export async function importLinkWithToast(
  ferry: Ferry,
  t: (k: string) => string,
  raw: string,
  companionUrl?: string,
): Promise<string | null> {
  const result = await importLink(ferry, raw, { companionUrl });
  if (result.ok) return result.id;
  const message = t(messages[result.code]);
  ferry.info(result.details === undefined ? message : { message, details: result.details }, 'error', 4000);
  return null;
}

export function LinkImport({ companionUrl, onImported, initialUrl = '' }: LinkImportProps) {
  const ferry = useFerry();
  const t = useI18n();
  const id = useId();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const value = input.current?.value ?? '';
    setBusy(true);
    const fileId = await importLinkWithToast(ferry, t, value, companionUrl);
    setBusy(false);
    if (fileId) {
      if (input.current) input.current.value = '';
      onImported?.(fileId);
    }
  };
  return (
    <form className="ferry-link-import" onSubmit={submit} aria-busy={busy}>
      <label htmlFor={id} className="ferry-visually-hidden">
        {t('urlLabel')}
      </label>
      <input
        ref={input}
        id={id}
        className="ferry-url-input"
        type="text"
        inputMode="url"
        autoComplete="off"
        placeholder={t('enterUrlToImport')}
        defaultValue={initialUrl}
        // biome-ignore lint/a11y/noAutofocus: the panel was opened to type a URL
        autoFocus
      />
      <button type="submit" className="ferry-button ferry-primary" disabled={busy}>
        {busy ? t('importing') : t('import')}
      </button>
    </form>
  );
}
