/**
 * Uppy's released `@uppy/dropbox` view mounted on the page, with `@uppy/tus` uploading to the
 * same `ferry` it uses as companion (for `providers-uppy-dropbox.e2e.ts`).
 */
import Uppy from '@uppy/core';
import Dropbox from '@uppy/dropbox';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(Dropbox, { target: '#dropbox', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
