/**
 * The page `ferry serve` shows: the full Dashboard uploading to the same server's tus endpoint,
 * with link import and camera panels talking to the same server as companion.
 * `?modal` shows it as a modal behind a button; `?theme=dark|auto` picks the theme;
 * `?countdown=N` counts N seconds down before a camera snapshot; `?maxFileSize=BYTES` restricts
 * file sizes (and so camera recordings).
 */
import { Ferry, RemoteUploader, TusUploader } from '@ferry/core';
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

// One engine per page, made outside React so StrictMode's double render cannot make two.
const maxFileSize = Number(params.get('maxFileSize') ?? 0) || null;
// Local files go straight to the tus endpoint; imported links go through the companion, which
// uploads them to the same endpoint.
const ferry = new Ferry({
  companionUrl,
  uploader: new TusUploader({ endpoint: '/files/' }),
  remoteUploader: new RemoteUploader({ endpoint: '/files/' }),
  restrictions: { maxFileSize },
});
window.ferry = ferry;

export function App() {
  const [open, setOpen] = useState(false);
  const dashboard = {
    theme,
    link: true,
    camera: countdown > 0 ? { countdown } : true,
    onDone: () => {
      ferry.removeFiles([...ferry.getState().fileIds]);
      setOpen(false);
    },
  } as const;
  return (
    <main className="demo" data-theme={theme}>
      <h1>Ferry</h1>
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
