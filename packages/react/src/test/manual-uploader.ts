/** An uploader the test drives by hand: each upload waits until the test settles it. */
import type { FerryFile, UploadContext, Uploader, UploadResult } from '@ferry/core';
import { UploaderError } from '@ferry/core';

export interface Pending {
  file: FerryFile;
  context: UploadContext;
  succeed(): void;
  fail(message: string, status?: number): void;
}

export class ManualUploader implements Uploader {
  readonly pending: Pending[] = [];

  upload(file: FerryFile, context: UploadContext): Promise<UploadResult> {
    return new Promise((ok, fail) => {
      context.signal.addEventListener('abort', () => fail(new UploaderError('aborted')));
      this.pending.push({
        file,
        context,
        succeed: () => {
          context.onProgress(file.size ?? 0, file.size);
          ok({ uploadURL: `mem://${file.name}` });
        },
        fail: (message, status) => fail(new UploaderError(message, { status, retryable: false })),
      });
    });
  }
}
