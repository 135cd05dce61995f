// The S3 benchmark page: one function per uploader, each sending the same generated file through
// ferry's /s3 routes straight to the bucket and resolving with the elapsed time and the key.
import { Ferry, S3MultipartUploader } from '@ferry/core';
import AwsS3 from '@uppy/aws-s3';
import Uppy from '@uppy/core';

/** `size` bytes built from one 16 MiB random block (cheap to make, incompressible). */
function bigFile(size) {
  const block = new Uint8Array(16 * 1024 * 1024);
  for (let i = 0; i < block.length; i += 65536) crypto.getRandomValues(block.subarray(i, i + 65536));
  const parts = [];
  for (let left = size; left > 0; left -= block.length)
    parts.push(left >= block.length ? block : block.subarray(0, left));
  return new File(parts, 'bench.bin', { type: 'application/octet-stream' });
}

async function ferry(size) {
  const engine = new Ferry({ uploader: new S3MultipartUploader({ companionUrl: location.origin }) });
  const id = engine.addFile({ data: bigFile(size) });
  const start = performance.now();
  const result = await engine.upload();
  const ms = performance.now() - start;
  const file = engine.getFile(id);
  if (result.failed.length) throw new Error(`ferry failed: ${file?.error?.message}`);
  return { ms, key: file?.s3Multipart?.key };
}

async function uppy(size) {
  const u = new Uppy({ autoProceed: false });
  u.use(AwsS3, { companionEndpoint: location.origin, shouldUseMultipart: true });
  u.addFile({ name: 'bench.bin', type: 'application/octet-stream', data: bigFile(size) });
  const start = performance.now();
  const result = await u.upload();
  const ms = performance.now() - start;
  if (result.failed?.length) throw new Error(`uppy failed: ${result.failed[0].error}`);
  return { ms, key: result.successful[0].response?.body?.key };
}

Object.assign(window, { bench: { ferry, uppy }, ready: true });
