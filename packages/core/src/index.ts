/**
 * @ferry/core: the framework-free upload engine.
 *
 * Layout: `ferry.ts` (the engine), `reducer.ts` (every state change), `store.ts` (observable
 * store), `emitter.ts` (events), `uploader.ts` (the uploader seam), `uploaders/` (tus...).
 */
export { Emitter } from './emitter.ts';
export { Ferry, type FerryEvents, type FerryOptions } from './ferry.ts';
export { type Action, initialState, reduce } from './reducer.ts';
export { type Listener, type ReadableStore, Store } from './store.ts';
export type * from './types.ts';
export { type UploadContext, type Uploader, UploaderError, type UploadResult } from './uploader.ts';
export { DEFAULT_RETRY_DELAYS, type TusOptions, TusUploader } from './uploaders/tus.ts';
