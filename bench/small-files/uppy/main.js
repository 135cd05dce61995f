// The peer page: Uppy's Dashboard uploading with @uppy/tus at its defaults (20 at a time, one
// POST then one PATCH per file) to the /files/ endpoint of the origin that served the page.
import Uppy from '@uppy/core';
import Dashboard from '@uppy/dashboard';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.min.css';
import '@uppy/dashboard/css/style.min.css';

window.uppy = new Uppy()
  .use(Dashboard, { inline: true, target: '#root', width: 750, height: 550 })
  .use(Tus, { endpoint: '/files/' });
