/** The link-import panel: a URL box and an Import button; the file is added as a remote file. */
import { type FormEvent, useId, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import { fetchUrlMeta, LinkImportError, linkDescriptor, normaliseUrl } from './link.ts';

export interface LinkImportProps {
  companionUrl: string;
  /** Called with the new file's id after a successful import. */
  onImported?(id: string): void;
  /** A URL to import straight away (e.g. pasted into the Dashboard). */
  initialUrl?: string;
}

/** Imports `raw` through the companion; shows the spec's toasts on failure. Returns the file id. */
export async function importLink(
  ferry: import('@ferry/core').Ferry,
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
    const meta = await fetchUrlMeta(companionUrl, url);
    return ferry.addFile(linkDescriptor(companionUrl, url, meta));
  } catch (error) {
    const fileError = error instanceof LinkImportError && error.code === 'failedToFetchFile';
    ferry.info(
      { message: t(fileError ? 'failedToFetchFile' : 'failedToFetch'), details: (error as Error).message },
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
