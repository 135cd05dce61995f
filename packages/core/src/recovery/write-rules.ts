/**
 * When recovery's journal writes (`journal.ts`): how many records a transaction takes, how writes
 * are paced while a large batch's sizes are read, how soon a change is compared and written.
 */
import type { FerryFile, FerryState } from '../types.ts';

/**
 * Records written per IndexedDB transaction. Each record is cloned on the main thread (about
 * 50 us, several times that on a loaded machine): 500 at once made 100 ms tasks beside a 10,000-
 * file pick, holding frames and the page's timers back; 100 stay a few ms.
 */
export const WRITE_BATCH = 100;
/**
 * While sizes are read, transactions start at most this often (ms): the size lookups come
 * first, and records written meanwhile (a batch of 10,000 files added) would take a fifth of
 * the main thread from them; a flush or the page going away writes at once.
 */
export const SIZING_PACE = 250;
/**
 * Writes are paced only while more sizes than this are pending (about 0.4 s of lookups in
 * Chromium): a smaller batch is sized before pacing would help, and its writes and copies held
 * back would only land on the uploads that follow (a click right after 500 files are listed).
 */
export const PACED_ABOVE = 1000;

/** Whether a large batch of sizes is being read (recovery's writes then wait their turn). */
export const sizingLarge = (state: FerryState) => state.sizesPending > PACED_ABOVE;
/**
 * Longest wait, in ms, before a change of the store is compared with what was last written. The
 * comparison walks every file, so changes that come together (hundreds of small uploads
 * finishing one after another) are compared once per window rather than once each.
 */
export const OBSERVE_DELAY = 50;
/**
 * Changes written soon. Progress waits for the throttle, and so does a start (waiting to
 * uploading): a small file that finishes within the window is written once, complete, rather
 * than twice. A reload within that window brings such a file back waiting, not resuming.
 */
export const soon = (a: FerryFile, b: FerryFile) =>
  (a.state !== b.state && !(a.state === 'waiting' && b.state === 'uploading')) ||
  a.tus !== b.tus ||
  a.s3Multipart !== b.s3Multipart ||
  a.serverToken !== b.serverToken ||
  a.ghost !== b.ghost ||
  a.meta !== b.meta ||
  a.name !== b.name;
