/**
 * Uppy's released `@uppy/box` view mounted on the page, with `@uppy/tus` uploading to the
 * same `ferry` it uses as companion (for `providers-uppy-box.e2e.ts`).
 */

import Box from '@uppy/box';
import Uppy from '@uppy/core';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(Box, { target: '#box', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
