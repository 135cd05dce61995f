/**
 * Upload speed and time left, smoothed so the status bar does not jitter: an exponential moving
 * average of the byte rate between samples. Pure; the status bar feeds it (time, bytes) samples.
 */

export interface SpeedEstimator {
  /** Adds a sample: total bytes uploaded at time `now` (ms). Returns the smoothed bytes/s. */
  sample(now: number, bytesUploaded: number): number;
  /** The smoothed bytes per second, 0 before two samples. */
  speed(): number;
  /** Seconds left for `remaining` bytes at the smoothed speed; null while unknown. */
  eta(remaining: number): number | null;
  reset(): void;
}

/** `halfLife` (ms): how fast old rates fade; 2 s is calm but still follows real changes. */
export function createSpeedEstimator(halfLife = 2000): SpeedEstimator {
  let last: { now: number; bytes: number } | null = null;
  let smoothed = 0;
  let seeded = false;
  return {
    sample(now, bytes) {
      if (last && now > last.now) {
        const dt = now - last.now;
        const rate = (Math.max(0, bytes - last.bytes) * 1000) / dt;
        if (!seeded) {
          smoothed = rate;
          seeded = true;
        } else {
          const weight = 1 - 0.5 ** (dt / halfLife);
          smoothed += (rate - smoothed) * weight;
        }
      }
      if (!last || now > last.now || bytes !== last.bytes) last = { now, bytes };
      return smoothed;
    },
    speed: () => smoothed,
    eta(remaining) {
      if (!seeded || smoothed <= 0) return null;
      return Math.max(0, Math.round(remaining / smoothed));
    },
    reset() {
      last = null;
      smoothed = 0;
      seeded = false;
    },
  };
}

/** "1h 2m", "3m 4s", "5s". */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}
