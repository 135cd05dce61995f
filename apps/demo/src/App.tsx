/** The page `ferry serve` shows: a Dashboard uploading to the same server's tus endpoint. */
import { Ferry, TusUploader } from '@ferry/core';
import { Dashboard, FerryProvider } from '@ferry/react';
import '@ferry/react/styles.css';
import { useState } from 'react';

declare global {
  interface Window {
    /** The page's engine, for scripting and end-to-end tests. */
    ferry?: Ferry;
  }
}

export function App() {
  const [ferry] = useState(() => {
    const instance = new Ferry({ uploader: new TusUploader({ endpoint: '/files/' }) });
    window.ferry = instance;
    return instance;
  });
  return (
    <main style={{ maxWidth: 780, margin: '40px auto', padding: '0 12px', fontFamily: 'system-ui, sans-serif' }}>
      <h1 style={{ fontSize: 22 }}>Ferry</h1>
      <FerryProvider ferry={ferry}>
        <Dashboard inline />
      </FerryProvider>
    </main>
  );
}
