// The peer page: Uppy's React Dashboard uploading with @uppy/tus, built like Ferry's demo.
import Uppy from '@uppy/core';
import Dashboard from '@uppy/react/dashboard';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.min.css';
import '@uppy/dashboard/css/style.min.css';
import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';

function App() {
  const [uppy] = useState(() => {
    const u = new Uppy().use(Tus, { endpoint: '/files/' });
    window.uppy = u;
    return u;
  });
  return <Dashboard uppy={uppy} width={750} height={550} />;
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
