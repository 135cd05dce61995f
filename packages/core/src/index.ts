/**
 * @ferry/core: the framework-free upload engine.
 *
 * Layout:
 * - `ferry.ts`: the public engine, wiring only; `admission.ts`: adding files.
 * - `types.ts`: data shapes; `files.ts`: records.
 * - `reducer.ts`: every state change, one action union; `store.ts`: the observable store.
 * - `emitter.ts` + `events.ts`: events.
 * - `sizing.ts` + `slicer.ts`: sizes of large batches read in time slices after adding.
 * - `read-ahead.ts`: small files' bytes read while idle.
 * - `restrictions.ts`: rejections as data, `formatSize`; `refusals.ts`: refusals of batches close
 *   together told in one toast.
 * - `locale.ts`: plural rules, placeholders, packs; `locales/`: one pack per language, English
 *   the reference.
 * - `informer.ts`: toasts.
 * - `runner.ts`: file and bundle runs, one completion; `limiter.ts`: concurrency; `retryer.ts`:
 *   retry policy; `stall.ts`: stall timer; `progress-batcher.ts`: progress throttle.
 * - `processors.ts`: pre/postprocessors.
 * - `online.ts` + `connectivity.ts`: offline pauses, online resumes.
 * - `uploader.ts`: the uploader seam; `uploaders/`: tus, xhr, s3, s3-multipart with its signer
 *   and XML reader, `send-xhr.ts` the XHR sender they share.
 * - `assembly/`: the `assembly` option: a Transloadit-compatible processing service; `client.ts`
 *   the API calls and polling, `status.ts` reading a status for one file, `assembly.ts` the engine
 *   plug-in (create per batch, tus into it, postprocessing, results).
 * - `recovery/`: opt-in recovery after a reload or a crash: records and bytes kept in IndexedDB
 *   (or OPFS), read back on start, `recovery.ts` the entry.
 * - `companion/`: `http.ts` what the clients share (fetch and socket seams, `base`,
 *   `withAccessToken`, provider errors); `remote.ts` urlMeta and RemoteUploader; `link.ts` link
 *   import; cloud providers: `provider.ts` the client with its token and shared refresh,
 *   `provider-login.ts` the OAuth popup with both hand-offs, `provider-walk.ts` recursive folder
 *   listing, `provider-wait.ts` rate limits waited out, `provider-state.ts` the browser's state
 *   and `provider-browser.ts` its behaviour, `providers.ts` the engine's registry and discovery;
 *   Google's pickers: `google-picker.ts` (the flows) over `google-env.ts` (Google's scripts).
 * - `image/`: optional crop/rotate/flip edits and the compression preprocessor, on a canvas.
 * - `test/`: helpers shared by core's and react's specs (never exported).
 */

export { Assemblies, type AssemblyHost, type AssemblyOptions } from './assembly/assembly.ts';
export {
  AssemblyError,
  type AssemblyParams,
  cancelAssembly,
  createAssembly,
  DEFAULT_ASSEMBLY_TIMEOUT,
  DEFAULT_POLL_DELAYS,
  type FetchLike,
  type WatchOptions,
  watchAssembly,
} from './assembly/client.ts';
export {
  type AssemblyStatus,
  type AssemblyUpload,
  executionProgress,
  failureOf,
  isBusy,
  resultsOf,
  statusUrl,
  uploadOf,
} from './assembly/status.ts';
export {
  browserGoogleEnv,
  type GoogleEnv,
  type GoogleToken,
  type GoogleUrls,
  googleUrls,
  type PickedDoc,
  pickerScopes,
} from './companion/google-env.ts';
export {
  GooglePicker,
  type GooglePickerOptions,
  type PickerKind,
  type PickerState,
  pickerConfigured,
  pickerIds,
} from './companion/google-picker.ts';
export {
  ProviderAuthError,
  ProviderRateLimitError,
  ProviderRequestError,
  type SocketFactory,
  type SocketLike,
} from './companion/http.ts';
export {
  importLink,
  type LinkErrorCode,
  type LinkImportResult,
  linkDescriptor,
  normaliseUrl,
} from './companion/link.ts';
export {
  type LogoutAnswer,
  ProviderClient,
  type ProviderClientOptions,
  type ProviderItem,
  type ProviderPage,
  type TokenStorage,
  tokenKey,
} from './companion/provider.ts';
export {
  type BrowserHost,
  type BrowserState,
  type Crumb,
  type FolderCount,
  ProviderBrowser,
  type ProviderBrowserOptions,
  providerDescriptor,
  type SelectionSummary,
} from './companion/provider-browser.ts';
export {
  type AuthMessage,
  type AuthWindow,
  connectUrl,
  type LoginEnv,
  LoginError,
  popupLogin,
} from './companion/provider-login.ts';
export {
  MAX_WAIT_SECONDS,
  MAX_WAITS,
  retryAfterLimits,
  type WaitOptions,
} from './companion/provider-wait.ts';
export { type WalkedFile, type WalkOptions, walkFolder } from './companion/provider-walk.ts';
export {
  enabledProviders,
  knownProviders,
  type ProviderInfo,
  Providers,
  type ProvidersOptions,
} from './companion/providers.ts';
export {
  RemoteUploader,
  type RemoteUploaderOptions,
  type UrlMeta,
  urlMeta,
} from './companion/remote.ts';
export { Emitter } from './emitter.ts';
export type { FerryEvents } from './events.ts';
export { Ferry, type FerryOptions, type Processor } from './ferry.ts';
export { createFile, newFileId } from './files.ts';
export {
  type CompressOptions,
  canvasTranscoder,
  imageCompressor,
  type Transcoder,
  targetSize,
} from './image/compress.ts';
export {
  drawEdited,
  fitRatio,
  flip,
  type Handle,
  type ImageEdit,
  isEdited,
  MIN_CROP,
  moveRect,
  noEdit,
  orientedSize,
  type Rect,
  type RenderOptions,
  type Rotation,
  renderEdit,
  resizeRect,
  rotate,
  type Size,
} from './image/edit.ts';
export { Informer } from './informer.ts';
export { Limiter, type Release } from './limiter.ts';
export {
  type ActiveLocale,
  type Direction,
  defaultLocale,
  type Locale,
  type LocaleEntry,
  type LocaleKey,
  type LocaleOption,
  type LocaleOverrides,
  type LocalePack,
  type LocaleStrings,
  type LocaleVars,
  type PluralCategory,
  type PluralEntry,
  pluralCategory,
  resolveLocale,
  translate,
} from './locale.ts';
export { en } from './locales/en.ts';
export { browserOnlineSource, DEFAULT_ONLINE_CHECK_INTERVAL, type OnlineSource, OnlineWatcher } from './online.ts';
export { DEFAULT_PROGRESS_THROTTLE, ProgressBatcher } from './progress-batcher.ts';
export {
  DEFAULT_READ_AHEAD_BUDGET,
  DEFAULT_READ_AHEAD_FILE_SIZE,
  type ReadAheadOptions,
} from './read-ahead.ts';
export { ByteKeeper, type BytesKind, DEFAULT_MAX_COPY_SIZE, type FileHandleLike } from './recovery/bytes.ts';
export {
  Recovery,
  type RecoveryOptions,
  type RecoverySnapshot,
  type SavedFile,
  type SavedRecord,
} from './recovery/recovery.ts';
export {
  type Action,
  emptyProgress,
  type FilePatch,
  initialState,
  type ProgressUpdate,
  type Revival,
  reduce,
  type SizeUpdate,
} from './reducer.ts';
export {
  checkFile,
  checkMinFiles,
  formatSize,
  noRestrictions,
  type Rejection,
  type RestrictionCode,
  RestrictionError,
  typeAllowed,
} from './restrictions.ts';
export { DEFAULT_RETRY_DELAYS, isRetryableStatus, shouldRetry, withRetries } from './retryer.ts';
export type { SizingOptions } from './sizing.ts';
export type { SliceOptions } from './slicer.ts';
export { DEFAULT_STALL_TIMEOUT, StallTimer } from './stall.ts';
export { type Listener, type ReadableStore, Store } from './store.ts';
export type * from './types.ts';
export {
  type AbortReason,
  type AskContext,
  type BundleContext,
  type CancelContext,
  toUploadError,
  type UploadContext,
  type Uploader,
  UploaderError,
  type UploadResult,
} from './uploader.ts';
export { type S3Options, S3Uploader } from './uploaders/s3.ts';
export {
  DEFAULT_PART_LIMIT,
  defaultChunkSize,
  MAX_PARTS,
  MIN_PART_SIZE,
  type PlannedPart,
  planParts,
  type S3MultipartOptions,
  S3MultipartUploader,
} from './uploaders/s3-multipart.ts';
export {
  type CreatedUpload,
  type ListedPart,
  pickMeta,
  retryStatus,
  S3Signer,
  type S3SignerOptions,
  type UploadParams,
  validateBatch,
  validateCreate,
  validateParams,
  validateParts,
} from './uploaders/s3-signer.ts';
export { readS3Xml, type S3XmlAnswer } from './uploaders/s3-xml.ts';
export { DEFAULT_SMALL_FILE_SIZE, type TusOptions, TusUploader } from './uploaders/tus.ts';
export { type XhrOptions, XhrUploader } from './uploaders/xhr.ts';
