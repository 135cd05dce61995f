/**
 * The camera panel: a mirrored live view (facing the user), take-picture with an optional
 * countdown then 'Smile!', and start/stop recording that stops before exceeding maxFileSize.
 */
import { useEffect, useRef, useState } from 'react';
import { useFerry } from '../context.tsx';
import { useI18n } from '../i18n.ts';
import {
  CAMERA_MODES,
  type CameraMode,
  constraints,
  extensionFor,
  recorderType,
  recordingName,
  snapshotName,
  wouldExceed,
} from './camera.ts';

export interface CameraProps {
  modes?: CameraMode[];
  mirror?: boolean;
  facingMode?: string;
  /** Seconds to count down before a snapshot; false for none. */
  countdown?: number | false;
  /** Recording stops before it would exceed this many bytes. */
  maxFileSize?: number | null;
  onCaptured?(id: string): void;
}

function stopTracks(stream: MediaStream): void {
  for (const track of stream.getTracks()) track.stop();
}

type Status = 'prompt' | 'ready' | 'unsupported' | 'denied';
const SMILE_MS = 1500;

const modeKey: Record<CameraMode, string> = {
  'video-audio': 'modeVideoAudio',
  'video-only': 'modeVideoOnly',
  'audio-only': 'modeAudioOnly',
  picture: 'modePicture',
};

export function Camera({
  modes = CAMERA_MODES,
  mirror = true,
  facingMode = 'user',
  countdown = false,
  maxFileSize,
  onCaptured,
}: CameraProps) {
  const ferry = useFerry();
  const t = useI18n();
  const [mode, setMode] = useState<CameraMode>(modes[0] ?? 'video-audio');
  const [status, setStatus] = useState<Status>('prompt');
  const [recording, setRecording] = useState(false);
  const [overlay, setOverlay] = useState<string | null>(null);
  const video = useRef<HTMLVideoElement>(null);
  const stream = useRef<MediaStream | null>(null);
  const recorder = useRef<MediaRecorder | null>(null);

  useEffect(() => {
    if (typeof navigator === 'undefined' || !navigator.mediaDevices?.getUserMedia) {
      setStatus('unsupported');
      return;
    }
    let cancelled = false;
    setStatus('prompt');
    navigator.mediaDevices.getUserMedia(constraints(mode, facingMode)).then(
      (s) => {
        // StrictMode mounts twice: a stream that arrives after cleanup is stopped at once.
        if (cancelled) {
          stopTracks(s);
          return;
        }
        stream.current = s;
        if (video.current) video.current.srcObject = s;
        setStatus('ready');
      },
      (error: Error) => {
        if (cancelled) return;
        setStatus('denied');
        ferry.info({ message: t('allowAccessTitle'), details: error.message }, 'error', 5000);
      },
    );
    return () => {
      cancelled = true;
      if (recorder.current && recorder.current.state !== 'inactive') recorder.current.stop();
      if (stream.current) stopTracks(stream.current);
      stream.current = null;
    };
  }, [mode, facingMode, ferry, t]);

  const add = (blob: Blob, name: string) => {
    const id = ferry.addFile({
      data: new File([blob], name, { type: blob.type }),
      name,
      type: blob.type,
      source: 'camera',
    });
    if (id) onCaptured?.(id);
  };

  const snapshot = () => {
    try {
      const v = video.current;
      if (!v?.videoWidth) throw new Error('the camera is not ready');
      const canvas = document.createElement('canvas');
      canvas.width = v.videoWidth;
      canvas.height = v.videoHeight;
      const ctx = canvas.getContext('2d');
      if (!ctx) throw new Error('no 2d context');
      ctx.drawImage(v, 0, 0);
      canvas.toBlob(
        (blob) => {
          if (blob) add(blob, snapshotName(Date.now()));
          else ferry.info(t('cannotReadImage'), 'error', 5000);
        },
        'image/jpeg',
        0.92,
      );
    } catch (error) {
      ferry.info((error as Error).message, 'error', 5000);
    }
  };

  const takePicture = () => {
    if (countdown === false || countdown <= 0) return snapshot();
    let left = countdown;
    const tick = () => {
      if (left > 0) {
        setOverlay(t('countdown', { seconds: left }));
        left -= 1;
        setTimeout(tick, 1000);
        return;
      }
      setOverlay(t('smile'));
      ferry.info(t('smile'), 'success', SMILE_MS);
      setTimeout(() => {
        setOverlay(null);
        snapshot();
      }, SMILE_MS);
    };
    tick();
  };

  const toggleRecording = () => {
    const current = recorder.current;
    if (current && current.state !== 'inactive') {
      current.stop();
      return;
    }
    const s = stream.current;
    if (!s || typeof MediaRecorder !== 'function') return ferry.info(t('recordingUnsupported'), 'error', 5000);
    const type = recorderType(mode, (m) => MediaRecorder.isTypeSupported(m));
    const rec = new MediaRecorder(s, type ? { mimeType: type } : undefined);
    const chunks: Blob[] = [];
    let total = 0;
    rec.ondataavailable = (e) => {
      if (e.data.size === 0) return;
      chunks.push(e.data);
      total += e.data.size;
      if (rec.state === 'recording' && wouldExceed(total, e.data.size, maxFileSize)) rec.stop();
    };
    rec.onstop = () => {
      setRecording(false);
      recorder.current = null;
      const mime = rec.mimeType || chunks[0]?.type || '';
      const ext = extensionFor(mime);
      if (!ext || chunks.length === 0) return ferry.info(t('recordingUnsupported'), 'error', 5000);
      add(new Blob(chunks, { type: mime.split(';')[0] }), recordingName(Date.now(), ext));
    };
    recorder.current = rec;
    rec.start(500);
    setRecording(true);
  };

  if (status === 'unsupported') {
    return (
      <div className="ferry-camera ferry-camera-message" role="alert">
        {t('webcamNotSupported')}
      </div>
    );
  }
  return (
    <div className="ferry-camera" data-status={status} data-recording={recording || undefined}>
      {status !== 'ready' && (
        <div className="ferry-camera-message">
          <h3>{t('allowAccessTitle')}</h3>
          <p>{t('allowAccessDescription')}</p>
        </div>
      )}
      <div className="ferry-camera-view" hidden={status !== 'ready' || mode === 'audio-only'}>
        <video ref={video} autoPlay muted playsInline data-mirrored={mirror || undefined} />
        {overlay && (
          <output className="ferry-camera-overlay" aria-live="assertive">
            {overlay}
          </output>
        )}
      </div>
      {status === 'ready' && mode === 'audio-only' && (
        <p className="ferry-camera-message">{recording ? t('recording') : t('modeAudioOnly')}</p>
      )}
      <div className="ferry-camera-controls">
        {modes.length > 1 && (
          <label className="ferry-camera-mode">
            <span className="ferry-visually-hidden">{t('cameraMode')}</span>
            <select value={mode} disabled={recording} onChange={(e) => setMode(e.currentTarget.value as CameraMode)}>
              {modes.map((m) => (
                <option key={m} value={m}>
                  {t(modeKey[m])}
                </option>
              ))}
            </select>
          </label>
        )}
        {mode === 'picture' ? (
          <button
            type="button"
            className="ferry-button ferry-primary"
            onClick={takePicture}
            disabled={status !== 'ready' || overlay !== null}
          >
            {t('takePicture')}
          </button>
        ) : (
          <button
            type="button"
            className="ferry-button ferry-primary"
            onClick={toggleRecording}
            disabled={status !== 'ready'}
            aria-pressed={recording}
          >
            {recording ? t('stopRecording') : t('startRecording')}
          </button>
        )}
      </div>
    </div>
  );
}
