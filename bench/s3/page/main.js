// The S3 benchmark page: one function per uploader, each sending the picked file through
// ferry's /s3 routes straight to the bucket and resolving with the elapsed time and the key.
// `bare` is the browser's floor: no library, the same routes and parts (see bare.js).
import { Ferry, S3MultipartUploader } from '@ferry/core';
// Another commit's engine (run.sh's BENCH_FERRY_AT), to compare two versions in one run.
import * as at from '@ferry/core-at';
import AwsS3 from '@uppy/aws-s3';
import Uppy from '@uppy/core';
import { bare } from './bare.js';

/** The file the driver picked with the page's file input (a disk-backed File, as in real use). */
function picked() {
  const file = document.getElementById('file').files[0];
  if (!file) throw new Error('no file picked');
  return file;
}

/**
 * `query`: the uploader's options from a peer named `ferry?limit=10&partMib=16` (parts in flight,
 * part size), to try the scheduling the floor uses against other settings in one run.
 */
async function ferry(core = { Ferry, S3MultipartUploader }, query = '') {
  const params = new URLSearchParams(query);
  const limit = params.has('limit') ? Number(params.get('limit')) : undefined;
  const partMib = params.has('partMib') ? Number(params.get('partMib')) : undefined;
  const getChunkSize = partMib ? () => partMib * 1024 * 1024 : undefined;
  const uploader = new core.S3MultipartUploader({ companionUrl: location.origin, limit, getChunkSize });
  const engine = new core.Ferry({ uploader });
  const id = engine.addFile({ data: picked() });
  const start = performance.now();
  const result = await engine.upload();
  const ms = performance.now() - start;
  const file = engine.getFile(id);
  if (result.failed.length) {
    const e = file?.error;
    throw new Error(`ferry failed: ${e?.message} (status ${e?.status}, ${e?.details})`);
  }
  return { ms, key: file?.s3Multipart?.key };
}

async function uppy() {
  const u = new Uppy({ autoProceed: false });
  u.use(AwsS3, { companionEndpoint: location.origin, shouldUseMultipart: true });
  u.addFile({ name: 'bench.bin', type: 'application/octet-stream', data: picked() });
  const start = performance.now();
  const result = await u.upload();
  const ms = performance.now() - start;
  if (result.failed?.length) throw new Error(`uppy failed: ${result.failed[0].error}`);
  return { ms, key: result.successful[0].response?.body?.key };
}

Object.assign(window, {
  bench: {
    ferry: (query) => ferry(undefined, query),
    'ferry-at': (query) => ferry(at, query),
    uppy,
    bare: (query) => bare(picked(), query),
  },
  ready: true,
});
