// The peer: Uppy's core with its React Dashboard, exposed as window.uppy for the timing script.
import Uppy from '@uppy/core';
import Dashboard from '@uppy/react/dashboard';
import '@uppy/core/css/style.min.css';
import '@uppy/dashboard/css/style.min.css';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';

function Page() {
  const [uppy] = useState(() => {
    const instance = new Uppy();
    window.uppy = instance;
    return instance;
  });
  return <Dashboard uppy={uppy} width={750} height={550} />;
}

createRoot(document.getElementById('root')).render(<Page />);
