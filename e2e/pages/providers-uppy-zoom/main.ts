/**
 * Uppy's released `@uppy/zoom` view mounted on the page, with `@uppy/tus` uploading to the
 * same `ferry` it uses as companion (for `providers-uppy-zoom.e2e.ts`).
 */

import Uppy from '@uppy/core';
import Tus from '@uppy/tus';
import Zoom from '@uppy/zoom';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(Zoom, { target: '#zoom', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
