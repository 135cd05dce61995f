/**
 * What a page can set on a new engine (`new Ferry(options)`), with the defaults; `ferry.ts`
 * reads them once, when it wires its parts.
 */
import type { AssemblyOptions } from './assembly/assembly.ts';
import type { ProvidersOptions } from './companion/providers.ts';
import type { LocaleOption } from './locale.ts';
import type { OnlineSource } from './online.ts';
import type { ReadAheadOptions } from './read-ahead.ts';
import type { RecoveryOptions } from './recovery/recovery.ts';
import type { SizingOptions } from './sizing.ts';
import type { FerryFile, FileDescriptor, Restrictions } from './types.ts';
import type { RequestHeaders, Uploader } from './uploader.ts';

export interface FerryOptions {
  /** Names this engine; recovery keeps each id's files apart (default 'ferry'). */
  id?: string;
  /** Uploader for local files (e.g. `new TusUploader({ endpoint: '/files/' })`). */
  uploader?: Uploader;
  /**
   * Process files on a Transloadit-compatible service (`ferry serve --assembly-key`): one
   * Assembly per batch, local files uploaded with tus into it, each file `postprocessing` while it
   * runs and `complete` with `file.results` (see `assembly/assembly.ts`). Replaces `uploader` for
   * local files.
   */
  assembly?: AssemblyOptions;
  /** The companion (`ferry` or a stock Companion) that imports links and moves remote files. */
  companionUrl?: string;
  /**
   * Headers sent with every request the engine's uploads and companion calls make (tus, XHR, S3
   * signing, link import, providers; the progress socket gets the bearer token as
   * `access_token`). A function is called before each request, so a token can be refreshed.
   */
  headers?: RequestHeaders;
  /** Cloud providers: token persistence and test plumbing (see `companion/providers.ts`). */
  providerOptions?: ProvidersOptions;
  /** Uploader for files with `isRemote` (companion transfers); defaults to `uploader`. */
  remoteUploader?: Uploader;
  restrictions?: Partial<Restrictions>;
  /** Upload as soon as files are added. */
  autoProceed?: boolean;
  /** Concurrent uploads across files; 0 = unlimited (the default). */
  limit?: number;
  /** A language pack (`@ferry/core/locales/de`), a pack with overrides, or overrides over English. */
  locale?: LocaleOption;
  meta?: Record<string, string>;
  /** Return false to refuse a file, or a descriptor to replace it. */
  onBeforeFileAdded?: (file: FerryFile) => boolean | FileDescriptor;
  /** No progress for this long aborts an upload (ms; default 30 000; 0 disables). */
  stallTimeout?: number;
  /** Minimum time between progress state changes (ms; default 500). */
  progressThrottle?: number;
  /** Connectivity source; the browser's by default. */
  online?: OnlineSource;
  /** Online poll interval (ms; default 3000). */
  onlineCheckInterval?: number;
  /**
   * Keep files and upload state in IndexedDB so a reload or a crash loses nothing (off by
   * default); see `recovery/recovery.ts`.
   */
  recovery?: boolean | RecoveryOptions;
  /**
   * Large batches of local files are added with their sizes pending and read in time slices
   * afterwards (see `sizing.ts`): how large, and the slice length (tuning; tests give a clock).
   */
  sizing?: SizingOptions;
  /**
   * Small files' bytes are read into memory while the engine is idle (no sizes being read, no
   * upload running), so their upload sends bytes, which costs the browser less than sending a File
   * (see `read-ahead.ts`): how large a file, and how many bytes at once. On by default (files up
   * to 64 KiB, 16 MiB held); false turns it off.
   */
  readAhead?: ReadAheadOptions | false;
}
