/**
 * An uploader the test drives by hand, for core's and react's specs: each upload waits until the
 * test settles it (`resolve`/`reject`, or `succeed`/`fail` for the usual endings), and rejects
 * when its signal aborts. Every call and every cancel of an idle upload is recorded.
 */
import type { FerryFile } from '../types.ts';
import { type UploadContext, type Uploader, UploaderError, type UploadResult } from '../uploader.ts';

/** One upload in flight, as the engine started it. */
export interface Call {
  file: FerryFile;
  ctx: UploadContext;
  resolve(result: UploadResult): void;
  reject(error: unknown): void;
  /** Reports the whole file sent, then finishes with `mem://{name}`. */
  succeed(): void;
  /** Fails for good (not retryable) with this message and status. */
  fail(message: string, status?: number): void;
}

export class ManualUploader implements Uploader {
  readonly calls: Call[] = [];
  /** Files whose `cancel` the engine called (an idle upload removed). */
  readonly cancelled: FerryFile[] = [];

  upload(file: FerryFile, ctx: UploadContext): Promise<UploadResult> {
    return new Promise((resolve, reject) => {
      ctx.signal.addEventListener('abort', () => reject(new UploaderError('aborted')), { once: true });
      this.calls.push({
        file,
        ctx,
        resolve,
        reject,
        succeed: () => {
          ctx.onProgress(file.size ?? 0, file.size);
          resolve({ uploadURL: `mem://${file.name}` });
        },
        fail: (message, status) => reject(new UploaderError(message, { status, retryable: false })),
      });
    });
  }

  async cancel(file: FerryFile): Promise<void> {
    this.cancelled.push(file);
  }

  /** The latest call (throws when there is none, so a test fails where it expected one). */
  last(): Call {
    const call = this.calls.at(-1);
    if (!call) throw new Error('no call');
    return call;
  }
}
