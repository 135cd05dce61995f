/**
 * The MediaRecorder loop the camera and the screen capture share: record a stream in half-second
 * chunks, stop before the next chunk would take it past maxFileSize, and hand back the bytes with
 * the type and extension they were recorded in (or null when there is nothing, or nothing the
 * spec names, to keep).
 */

/** The file extension for a recorded MIME type, or null when it is not one the spec names. */
export function extensionFor(mimeType: string): string | null {
  const [type = ''] = mimeType.toLowerCase().split(';');
  const table: Record<string, string> = {
    'video/ogg': 'ogv',
    'audio/ogg': 'ogg',
    'video/webm': 'webm',
    'audio/webm': 'webm',
    'video/x-matroska': 'mkv',
    'video/matroska': 'mkv',
    'video/mp4': 'mp4',
    'audio/mp4': 'mp4',
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
  };
  return table[type.trim()] ?? null;
}

/** What a recording gave: its bytes, their MIME type without parameters, and its extension. */
export interface Recorded {
  blob: Blob;
  type: string;
  ext: string;
}

/**
 * Starts recording `stream` as `type` ('' for the browser's default) and returns the recorder;
 * stopping it (or the size limit) calls `onStop` once with the recording, or null when nothing
 * was recorded or its type has no extension we know.
 */
export function record(
  stream: MediaStream,
  type: string,
  maxFileSize: number | null | undefined,
  onStop: (recorded: Recorded | null) => void,
): MediaRecorder {
  const rec = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
  const chunks: Blob[] = [];
  let total = 0;
  rec.ondataavailable = (e) => {
    if (e.data.size === 0) return;
    chunks.push(e.data);
    total += e.data.size;
    if (rec.state === 'recording' && wouldExceed(total, e.data.size, maxFileSize)) rec.stop();
  };
  rec.onstop = () => {
    const mime = rec.mimeType || chunks[0]?.type || '';
    const ext = extensionFor(mime);
    if (!ext || chunks.length === 0) return onStop(null);
    const plain = mime.split(';')[0] ?? '';
    onStop({ blob: new Blob(chunks, { type: plain }), type: plain, ext });
  };
  rec.start(500);
  return rec;
}

/** Whether the next chunk, if as large as the last one, would take the recording past the limit. */
export function wouldExceed(total: number, lastChunk: number, maxFileSize: number | null | undefined): boolean {
  return typeof maxFileSize === 'number' && maxFileSize > 0 && total + lastChunk > maxFileSize;
}
