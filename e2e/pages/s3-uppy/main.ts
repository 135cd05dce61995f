/** Exposes Uppy's core and S3 plugin to the compatibility spec, plus deterministic file bytes. */
import AwsS3 from '@uppy/aws-s3';
import Uppy from '@uppy/core';

/** The same bytes as `patternBytes` in e2e/support/core-page.ts. */
function pattern(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 31 + seed + (i >> 13)) & 255;
  return bytes;
}

function patternFile(name: string, size: number, seed: number, type = 'application/octet-stream'): File {
  return new File([pattern(size, seed) as BlobPart], name, { type, lastModified: seed });
}

Object.assign(window, { Uppy, AwsS3, patternFile, ready: true });
