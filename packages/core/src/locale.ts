/**
 * Every user-facing string of the engine and its UI, English by default and replaceable
 * (`new Ferry({ locale: { ... } })`). Holds the spec's error catalogue verbatim.
 * `%{name}` placeholders are filled from the variables passed to {@link translate}; a plural
 * entry `{ one, other }` is chosen by `smart_count`.
 */

/** A string, or a pair chosen by the `smart_count` variable. */
export type LocaleEntry = string | { one: string; other: string };

export const defaultLocale = {
  // Spec section 8, the error catalogue.
  noInternetConnection: 'No Internet connection',
  connectedToInternet: 'Connected!',
  companionError: 'Connection with Companion failed',
  authRequired: 'Authorization required',
  failedToFetch: 'Companion failed to fetch this URL, please make sure it’s correct',
  failedToFetchFile: 'Failed to fetch the file',
  uploadStalled: 'Upload stalled for %{seconds} seconds, aborting.',
  uploadError: 'Upload error',
  uploadFailed: 'upload failed',
  cannotReadImage: 'cannot read image',
  preparingUpload: 'Preparing upload...',
  webcamNotSupported: 'Webcam access not supported',
  recordingUnsupported: 'Could not retrieve recording: Unsupported media type',
  allowAccessTitle: 'Please allow access to your camera',
  smile: 'Smile!',
  incorrectUrl: 'Incorrect URL: Please make sure you are entering a direct link to a file',
  non2xx: 'Non 2xx',
  etagUnreadable:
    'Could not read the ETag header. This likely means CORS is not configured correctly on the bucket (ETag must be exposed).',
  failedBecause: 'Failed because: %{reason}',
  missingEndpoint: 'tus: neither an endpoint nor an upload URL is provided',
  missingLocation: 'tus: invalid or missing Location header',
  invalidOffset: 'tus: invalid or missing offset value',
  invalidLength: 'tus: invalid or missing length value',
  uploadLocked: 'tus: upload is currently locked; retry later',
  bundleRemoteFiles: 'Can’t upload remote files when the `bundle: true` option is set',
  bundleNeedsFormData: '`bundle: true` requires `formData: true`',
  // Restrictions.
  exceedsSize: '%{file} exceeds maximum allowed size of %{size}',
  inferiorSize: 'This file is smaller than the allowed size of %{size}',
  exceedsTotalSize: '%{file} would make the total size exceed the allowed %{size}',
  youCanOnlyUploadX: {
    one: 'You can only upload %{smart_count} file',
    other: 'You can only upload %{smart_count} files',
  },
  youHaveToAtLeastSelectX: {
    one: 'You have to select at least %{smart_count} file',
    other: 'You have to select at least %{smart_count} files',
  },
  youCanOnlyUploadFileTypes: 'You can only upload: %{types}',
  noDuplicates: 'Cannot add the duplicate file ‘%{fileName}’, it already exists',
  rejectedByCallback: '%{file} was not added',
  andNMore: { one: '%{message} (and %{smart_count} more)', other: '%{message} (and %{smart_count} more)' },
  // UI strings the Dashboard and status bar use.
  dropPasteFiles: 'Drop files here or %{browseFiles}',
  browseFiles: 'browse files',
  browseFolders: 'browse folders',
  uploadXFiles: { one: 'Upload %{smart_count} file', other: 'Upload %{smart_count} files' },
  xFilesSelected: { one: '%{smart_count} file selected', other: '%{smart_count} files selected' },
  uploading: 'Uploading',
  uploadComplete: 'Upload complete',
  uploadPaused: 'Upload paused',
  complete: 'Complete',
  paused: 'Paused',
  error: 'Error',
  retry: 'Retry',
  retryUpload: 'Retry upload',
  pauseUpload: 'Pause upload',
  resumeUpload: 'Resume upload',
  cancelUpload: 'Cancel upload',
  cancel: 'Cancel',
  removeFile: 'Remove file',
  xFilesFailed: { one: '%{smart_count} file failed to upload', other: '%{smart_count} files failed to upload' },
  dataUploadedOfTotal: '%{complete} of %{total}',
  xTimeLeft: '%{time} left',
  import: 'Import',
  enterUrlToImport: 'Enter URL to import a file',
  addMore: 'Add more',
  done: 'Done',
} satisfies Record<string, LocaleEntry>;

export type LocaleKey = keyof typeof defaultLocale;
export type LocaleStrings = Record<LocaleKey, LocaleEntry>;
export type LocaleVars = Record<string, string | number>;

/** Looks `key` up in `strings` and fills its placeholders; unknown keys come back as the key. */
export function translate(strings: Partial<Record<string, LocaleEntry>>, key: string, vars: LocaleVars = {}): string {
  const entry = strings[key] ?? (defaultLocale as Record<string, LocaleEntry>)[key];
  if (entry === undefined) return key;
  const text = typeof entry === 'string' ? entry : Number(vars.smart_count ?? 0) === 1 ? entry.one : entry.other;
  return text.replace(/%\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}
