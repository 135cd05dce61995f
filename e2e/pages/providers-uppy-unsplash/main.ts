/**
 * Uppy's released `@uppy/unsplash` view mounted on the page, with `@uppy/tus` uploading to the
 * same `ferry` it uses as companion (for `providers-uppy-unsplash.e2e.ts`).
 */
import Uppy from '@uppy/core';
import Tus from '@uppy/tus';
import Unsplash from '@uppy/unsplash';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(Unsplash, { target: '#unsplash', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
