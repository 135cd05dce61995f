/**
 * Uppy's released `@uppy/google-drive` view mounted on the page, with `@uppy/tus` uploading to
 * the same `ferry` it uses as companion (for `providers-uppy.e2e.ts`).
 */
import Uppy from '@uppy/core';
import GoogleDrive from '@uppy/google-drive';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
uppy.use(GoogleDrive, { target: '#drive', companionUrl: location.origin });
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
