/**
 * The sign-in of a provider that signs in with a form instead of a popup (WebDAV): the server URL
 * (a share link, or the WebDAV address of the person's files), and optionally a username and app
 * password. What the companion answers when it refuses (a malformed URL, an address its egress
 * rules refuse, wrong credentials) shows as is: it says what to change.
 */
import type { ProviderBrowser } from '@ferry/core';
import { type FormEvent, useId, useState } from 'react';
import { useI18n } from '../i18n.ts';

export function ProviderForm({
  browser,
  busy,
  error,
}: {
  browser: ProviderBrowser;
  busy: boolean;
  error: string | null;
}) {
  const t = useI18n();
  const id = useId();
  const [url, setUrl] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // Empty fields are left out: the URL may carry the credentials itself.
    const form: Record<string, string> = { webdavUrl: url.trim() };
    if (username.trim() !== '') form.username = username.trim();
    if (password !== '') form.password = password;
    void browser.signIn(form);
  };
  const title = t('signInTo', { provider: browser.name });
  return (
    <form className="ferry-provider-auth ferry-provider-form" aria-label={title} onSubmit={submit} aria-busy={busy}>
      <h3 className="ferry-provider-auth-title">{title}</h3>
      <label htmlFor={`${id}-url`}>{t('serverUrl')}</label>
      <input
        id={`${id}-url`}
        className="ferry-url-input"
        type="text"
        inputMode="url"
        autoComplete="url"
        aria-describedby={`${id}-hint`}
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        // biome-ignore lint/a11y/noAutofocus: the panel was opened to type the server's URL
        autoFocus
      />
      <p id={`${id}-hint`} className="ferry-provider-hint">
        {t('serverUrlHint')}
      </p>
      <label htmlFor={`${id}-user`}>{t('usernameOptional')}</label>
      <input
        id={`${id}-user`}
        className="ferry-url-input"
        type="text"
        autoComplete="username"
        value={username}
        onChange={(e) => setUsername(e.target.value)}
      />
      <label htmlFor={`${id}-password`}>{t('appPasswordOptional')}</label>
      <input
        id={`${id}-password`}
        className="ferry-url-input"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      {error && (
        <p className="ferry-provider-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="ferry-button ferry-primary" disabled={busy || url.trim() === ''}>
        {busy ? t('connecting') : t('signIn')}
      </button>
    </form>
  );
}
