/**
 * Exposes Uppy's core and the released Transloadit plugin to `transloadit-uppy.e2e.ts`, and
 * records what arrives on every EventSource the page opens (the plugin's update stream), so the
 * spec can tell which updates came live rather than from polling.
 */
import Uppy from '@uppy/core';
import Transloadit from '@uppy/transloadit';

/** One update as the page's EventSource delivered it. */
interface Heard {
  url: string;
  type: string;
  data: string;
}

const heard: Heard[] = [];
const opened: string[] = [];
const names = [
  'message',
  'assembly_upload_finished',
  'assembly_result_finished',
  'assembly_error',
  'assembly_execution_progress',
];

class RecordingEventSource extends EventSource {
  constructor(url: string | URL, init?: EventSourceInit) {
    super(url, init);
    const at = String(url);
    this.addEventListener('open', () => opened.push(at));
    for (const type of names) {
      this.addEventListener(type, (e) => heard.push({ url: at, type, data: String((e as MessageEvent).data) }));
    }
  }
}

Object.assign(window, { EventSource: RecordingEventSource, Uppy, Transloadit, heard, opened, ready: true });
