/** Exposes Uppy's core, link-import and tus plugins to the companion compatibility spec. */
import Uppy from '@uppy/core';
import Tus from '@uppy/tus';
import Url from '@uppy/url';

Object.assign(window, { Uppy, Tus, Url, ready: true });
