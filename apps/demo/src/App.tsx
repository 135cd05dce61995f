/**
 * The page `ferry serve` shows: the full Dashboard uploading to the same server's tus endpoint,
 * with link import, camera and cloud provider panels talking to the same server as companion.
 * `?modal` shows it as a modal behind a button; `?theme=dark|auto` picks the theme;
 * `?countdown=N` counts N seconds down before a camera snapshot; `?maxFileSize=BYTES` restricts
 * file sizes (and so camera recordings); `?lang=de` picks the language (the switch on the page
 * changes it live); `?compress` shrinks images to 1920 px before upload. Uploaded files link to
 * their result, images can be edited from the file card, the screen can be captured, and files
 * dropped anywhere on the page are added. Recovery is on: a reload brings the files back;
 * `?recoveryMaxCopy=BYTES` copies only files up to that size (larger ones come back as ghosts),
 * `?recovery=off` turns it off (to measure what it costs), as `?readAhead=off` does reading
 * small files ahead; `?uploadWorker=1` sends small files' requests from a Worker (TusOptions.uploadWorker);
 * `?fileSystemAccess` picks files through `showOpenFilePicker` (their handles need no copy).
 * `?googleClientId=&googleApiKey=&googleAppId=` give the page a Google app, which shows Google's
 * Drive and Photos pickers when the server enables them (`--google-picker`).
 */
import { Ferry, imageCompressor, type LocalePack, RemoteUploader, TusUploader } from '@ferry/core';
import { ar } from '@ferry/core/locales/ar';
import { de } from '@ferry/core/locales/de';
import { en } from '@ferry/core/locales/en';
import { es } from '@ferry/core/locales/es';
import { fr } from '@ferry/core/locales/fr';
import { ja } from '@ferry/core/locales/ja';
import { ptBR } from '@ferry/core/locales/pt-BR';
import { zhCN } from '@ferry/core/locales/zh-CN';
import { Dashboard, FerryProvider, type Theme } from '@ferry/react';
import '@ferry/react/styles.css';
import './demo.css';
import { useState } from 'react';

declare global {
  interface Window {
    /** The page's engine, for scripting and end-to-end tests. */
    ferry?: Ferry;
  }
}

const params = new URLSearchParams(window.location.search);
const theme = (params.get('theme') as Theme | null) ?? 'light';
const companionUrl = window.location.origin;
const countdown = Number(params.get('countdown') ?? 0);

/** The languages of the switch, each named in itself. */
const languages: { pack: LocalePack; name: string }[] = [
  { pack: en, name: 'English' },
  { pack: de, name: 'Deutsch' },
  { pack: fr, name: 'Français' },
  { pack: es, name: 'Español' },
  { pack: ptBR, name: 'Português (Brasil)' },
  { pack: ja, name: '日本語' },
  { pack: zhCN, name: '简体中文' },
  { pack: ar, name: 'العربية' },
];
const packFor = (code: string | null) => languages.find((l) => l.pack.code === code)?.pack ?? en;

// One engine per page, made outside React so StrictMode's double render cannot make two.
const maxFileSize = Number(params.get('maxFileSize') ?? 0) || null;
const recoveryMaxCopy = params.has('recoveryMaxCopy') ? Number(params.get('recoveryMaxCopy')) : null;
// Concurrent uploads (`?limit=6`); unlimited by default, as the engine's default.
const limit = Number(params.get('limit') ?? 0) || 0;
// The page's Google app, for Google's pickers (the server imports what was picked with its token).
const googleClientId = params.get('googleClientId');
const googlePicker = googleClientId
  ? {
      clientId: googleClientId,
      apiKey: params.get('googleApiKey') ?? undefined,
      appId: params.get('googleAppId') ?? undefined,
    }
  : undefined;
// Local files go straight to the tus endpoint; imported links go through the companion, which
// uploads them to the same endpoint.
const ferry = new Ferry({
  companionUrl,
  uploader: new TusUploader({ endpoint: '/files/', uploadWorker: params.get('uploadWorker') === '1' }),
  remoteUploader: new RemoteUploader({ endpoint: '/files/' }),
  restrictions: { maxFileSize },
  ...(googlePicker ? { providerOptions: { googlePicker } } : {}),
  limit,
  locale: packFor(params.get('lang')),
  // A reload or a crashed tab loses nothing: files and upload state come back from IndexedDB.
  recovery:
    params.get('recovery') === 'off' ? false : recoveryMaxCopy === null ? true : { maxCopySize: recoveryMaxCopy },
  ...(params.get('readAhead') === 'off' ? { readAhead: false } : {}),
});
window.ferry = ferry;
if (params.has('compress')) imageCompressor(ferry, { maxWidth: 1920, maxHeight: 1920, quality: 0.8 });

function LanguageSwitch() {
  const [code, setCode] = useState(ferry.locale.code);
  const change = (next: string) => {
    setCode(next);
    ferry.setLocale(packFor(next));
    const url = new URL(window.location.href);
    url.searchParams.set('lang', next);
    window.history.replaceState(window.history.state, '', url);
  };
  return (
    <label className="demo-language">
      <span>Language</span>
      <select value={code} onChange={(e) => change(e.currentTarget.value)}>
        {languages.map((l) => (
          <option key={l.pack.code} value={l.pack.code} lang={l.pack.code}>
            {l.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function App() {
  const [open, setOpen] = useState(false);
  const dashboard = {
    theme,
    link: true,
    // Google Drive, Instagram... as the server enables them (GET /providers).
    providers: true,
    camera: countdown > 0 ? { countdown } : true,
    screenCapture: true,
    imageEditor: true,
    resultLinks: true,
    pageDrop: true,
    fileSystemAccess: params.has('fileSystemAccess'),
    onDone: () => {
      ferry.removeFiles([...ferry.getState().fileIds]);
      setOpen(false);
    },
  } as const;
  return (
    <main className="demo" data-theme={theme}>
      <header className="demo-header">
        <h1>Ferry</h1>
        <LanguageSwitch />
      </header>
      <FerryProvider ferry={ferry}>
        {params.has('modal') ? (
          <>
            <button type="button" className="ferry-button ferry-primary" onClick={() => setOpen(true)}>
              Upload files
            </button>
            <Dashboard
              {...dashboard}
              modal
              open={open}
              onRequestClose={() => setOpen(false)}
              closeOnClickOutside
              browserBackButtonClose
            />
          </>
        ) : (
          <Dashboard {...dashboard} inline />
        )}
      </FerryProvider>
    </main>
  );
}
