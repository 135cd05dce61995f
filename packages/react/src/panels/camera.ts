/** Camera helpers without the UI: constraints per mode, file names, recording extensions. */

export type CameraMode = 'video-audio' | 'video-only' | 'audio-only' | 'picture';
export const CAMERA_MODES: CameraMode[] = ['video-audio', 'video-only', 'audio-only', 'picture'];

export function constraints(mode: CameraMode, facingMode = 'user'): MediaStreamConstraints {
  return {
    video: mode === 'audio-only' ? false : { facingMode },
    audio: mode === 'video-audio' || mode === 'audio-only',
  };
}

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

/** The MIME type to ask MediaRecorder for, in order of preference, or '' for its default. */
export function recorderType(mode: CameraMode, isSupported: (type: string) => boolean): string {
  const video = ['video/webm;codecs=vp9,opus', 'video/webm', 'video/mp4'];
  const audio = ['audio/webm', 'audio/ogg', 'audio/mp4'];
  return (mode === 'audio-only' ? audio : video).find((t) => isSupported(t)) ?? '';
}

export const snapshotName = (now: number) => `cam-${now}.jpg`;
export const recordingName = (now: number, ext: string) => `webcam-${now}.${ext}`;

/** Whether the next chunk, if as large as the last one, would take the recording past the limit. */
export function wouldExceed(total: number, lastChunk: number, maxFileSize: number | null | undefined): boolean {
  return typeof maxFileSize === 'number' && maxFileSize > 0 && total + lastChunk > maxFileSize;
}
