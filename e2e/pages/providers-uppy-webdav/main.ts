/**
 * Uppy's released `@uppy/webdav` view mounted on the page, with `@uppy/tus` uploading to the
 * same `ferry` it uses as companion (for `providers-uppy-webdav.e2e.ts`).
 */
import Uppy from '@uppy/core';
import Tus from '@uppy/tus';
import Webdav from '@uppy/webdav';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(Webdav, { target: '#webdav', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
