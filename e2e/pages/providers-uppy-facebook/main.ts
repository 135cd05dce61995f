/**
 * Uppy's released `@uppy/facebook` view mounted on the page, with `@uppy/tus` uploading to the
 * same `ferry` it uses as companion (for `providers-uppy-facebook.e2e.ts`).
 */

import Uppy from '@uppy/core';
import Facebook from '@uppy/facebook';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(Facebook, { target: '#facebook', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
