/**
 * The camera panel: a mirrored live view (facing the user), take-picture with an optional
 * countdown then 'Smile!', and start/stop recording that stops before exceeding maxFileSize.
 * Both buttons are on the panel when the modes allow both (the spec's drawing); the mode select
 * only chooses what a recording holds (video and audio, video only, audio only), and there is
 * no picture to take from audio only.
 * It only renders; the camera itself is `dom/camera.ts` behind the `useCamera` hook.
 */
import { useState } from 'react';
import { CAMERA_MODES, type CameraMode } from '../dom/camera.ts';
import { useCamera } from '../hooks/useCamera.ts';
import { useI18n } from '../i18n.ts';

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

const modeKey: Record<CameraMode, string> = {
  'video-audio': 'modeVideoAudio',
  'video-only': 'modeVideoOnly',
  'audio-only': 'modeAudioOnly',
  picture: 'modePicture',
};

export function Camera({
  modes = CAMERA_MODES,
  mirror = true,
  facingMode,
  countdown = false,
  maxFileSize,
  onCaptured,
}: CameraProps) {
  const t = useI18n();
  const recordModes = modes.filter((m) => m !== 'picture');
  const canPicture = modes.includes('picture');
  const [mode, setMode] = useState<CameraMode>(recordModes[0] ?? 'picture');
  const { status, recording, overlay, videoRef, takePicture, toggleRecording } = useCamera({
    mode,
    facingMode,
    countdown,
    maxFileSize,
    onCaptured,
  });

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
        <video ref={videoRef} autoPlay muted playsInline data-mirrored={mirror || undefined} />
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
        {recordModes.length > 1 && (
          <label className="ferry-camera-mode">
            <span className="ferry-visually-hidden">{t('cameraMode')}</span>
            <select value={mode} disabled={recording} onChange={(e) => setMode(e.currentTarget.value as CameraMode)}>
              {recordModes.map((m) => (
                <option key={m} value={m}>
                  {t(modeKey[m])}
                </option>
              ))}
            </select>
          </label>
        )}
        {canPicture && mode !== 'audio-only' && (
          <button
            type="button"
            className="ferry-button ferry-primary"
            onClick={takePicture}
            disabled={status !== 'ready' || overlay !== null}
          >
            {t('takePicture')}
          </button>
        )}
        {mode !== 'picture' && (
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
