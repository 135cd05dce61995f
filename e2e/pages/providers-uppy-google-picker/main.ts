/**
 * Uppy's released `@uppy/google-drive-picker` and `@uppy/google-photos-picker` views mounted on
 * the page, with `@uppy/tus` uploading to the same `ferry` they use as companion (for
 * `providers-uppy-google-picker.e2e.ts`). Which plugin mounts is chosen by `?picker=drive|photos`:
 * each shows its picker as soon as it mounts.
 */

import Uppy from '@uppy/core';
import GoogleDrivePicker from '@uppy/google-drive-picker';
import GooglePhotosPicker from '@uppy/google-photos-picker';
import Tus from '@uppy/tus';
import '@uppy/core/css/style.css';
import '@uppy/core/provider-views/css/style.css';

const uppy = new Uppy({ autoProceed: false });
const picker = new URLSearchParams(location.search).get('picker');
if (picker === 'drive') {
  uppy.use(GoogleDrivePicker, {
    target: '#drive',
    companionUrl: location.origin,
    clientId: 'picker-client.apps.googleusercontent.com',
    apiKey: 'picker-api-key',
    appId: '123456789012',
  });
} else {
  uppy.use(GooglePhotosPicker, {
    target: '#photos',
    companionUrl: location.origin,
    clientId: 'picker-client.apps.googleusercontent.com',
  });
}
uppy.use(Tus, { endpoint: `${location.origin}/files/` });

Object.assign(window, { uppy, ready: true });
