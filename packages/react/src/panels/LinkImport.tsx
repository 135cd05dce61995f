/** The link-import panel: a URL box and an Import button; the file is added as a remote file. */
import { type Ferry, UploaderError, urlMeta } from '@ferry/core';
import { type FormEvent, useId, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { linkDescriptor, normaliseUrl } from './link.ts';

export interface LinkImportProps {
  companionUrl: string;
  /** Called with the new file's id after a successful import. */
  onImported?(id: string): void;
  /** A URL to import straight away (e.g. pasted into the Dashboard). */
  initialUrl?: string;
}

/**
 * Imports `raw` through the companion (`POST /url/meta` via the core's client) and adds it as a
 * remote file; returns its id. Failures toast for 4 s: an error answer from the companion is
 * 'Failed to fetch the file', a call that fails altogether is 'Companion failed to fetch this URL'.
 */
export async function importLink(
  ferry: Ferry,
  t: (k: string) => string,
  companionUrl: string,
  raw: string,
): Promise<string | null> {
  const url = normaliseUrl(raw);
  if (!url) {
    ferry.info(t('incorrectUrl'), 'error', 4000);
    return null;
  }
  try {
    const meta = await urlMeta(companionUrl, url);
    return ferry.addFile(linkDescriptor(companionUrl, url, meta));
  } catch (error) {
    const answered = error instanceof UploaderError && error.status !== undefined;
    ferry.info(
      { message: t(answered ? 'failedToFetchFile' : 'failedToFetch'), details: (error as Error).message },
      'error',
      4000,
    );
    return null;
  }
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
    const fileId = await importLink(ferry, t, companionUrl, value);
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
