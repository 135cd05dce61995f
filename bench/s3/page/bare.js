// The browser's floor of bench/s3: the picked file sent to the bucket with no library. One
// create, every part's URL signed in one batch before the first PUT, then `file.slice()` parts
// PUT with plain XMLHttpRequest (or fetch), the same part size and parts in flight as
// S3MultipartUploader's defaults (5 MiB, 5), then complete. No progress listener, no retries but
// a 5xx part sent again, no bookkeeping: what any uploader in this Chromium can reach against
// this Garage.
//
// `query` (peer `bare?via=fetch&progress=1&limit=10&partMib=16`): `via` fetch or xhr (default);
// `progress=1` listens to XHR upload progress as an uploader must; `limit`, `partMib` as for ferry.
// `body` says what each PUT sends: `slice` (default, the file's Blob slice), `read` (the slice
// read into an ArrayBuffer first, as an uploader reading ahead would), `memory` (one in-memory
// part sent again and again, not the file: the network path alone, to see what the Blob costs).
// Under Playwright (DevTools' Network domain on) both byte bodies run at about 2 MB/s and a GiB
// outlives its part URLs' signatures: use them with BENCH_DRIVER=cdp or a small BENCH_SIZE.

const MiB = 1024 * 1024;

async function call(method, path, body) {
  const response = await fetch(`${location.origin}/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function putXhr(url, body, progress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url, true);
    if (progress) xhr.upload.onprogress = () => {};
    xhr.onload = () =>
      xhr.status >= 200 && xhr.status < 300
        ? resolve(xhr.getResponseHeader('ETag'))
        : reject(new Error(`PUT part: ${xhr.status} ${xhr.responseText.slice(0, 200)}`));
    xhr.onerror = () => reject(new Error('PUT part: network error'));
    xhr.send(body);
  });
}

async function putFetch(url, body) {
  const response = await fetch(url, { method: 'PUT', body });
  // The answer's body is read either way: one left unread shows as an aborted request when the page closes.
  const text = await response.text();
  if (!response.ok) throw new Error(`PUT part: ${response.status} ${text.slice(0, 200)}`);
  return response.headers.get('ETag');
}

export async function bare(file, query = '') {
  const params = new URLSearchParams(query);
  const limit = Number(params.get('limit') ?? 5);
  const part = Number(params.get('partMib') ?? 5) * MiB;
  const progress = params.get('progress') === '1';
  const put = params.get('via') === 'fetch' ? putFetch : (url, body) => putXhr(url, body, progress);
  const source = params.get('body') ?? 'slice';
  const count = Math.max(1, Math.ceil(file.size / part));
  const memory = source === 'memory' ? await file.slice(0, part).arrayBuffer() : undefined;
  const bodyOf = async (i) => {
    const start = i * part;
    const end = Math.min(start + part, file.size);
    if (memory) return new Uint8Array(memory, 0, end - start);
    const slice = file.slice(start, end);
    return source === 'read' ? slice.arrayBuffer() : slice;
  };
  const numbers = Array.from({ length: count }, (_, i) => i + 1);

  const start = performance.now();
  const { uploadId, key } = await call('POST', 's3/multipart', {
    filename: 'bench.bin',
    type: 'application/octet-stream',
    metadata: {},
  });
  const route = `s3/multipart/${encodeURIComponent(uploadId)}`;
  const { presignedUrls } = await call(
    'GET',
    `${route}/batch?key=${encodeURIComponent(key)}&partNumbers=${numbers.join(',')}`,
  );
  // Garage on a loaded machine sometimes sheds a PUT with 503: send that part again (at most 3
  // times), as any S3 client does, rather than lose the run.
  const send = async (i) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await put(presignedUrls[i + 1], await bodyOf(i));
      } catch (error) {
        if (attempt >= 3 || !/PUT part: 5\d\d/.test(error.message)) throw error;
      }
    }
  };
  const etags = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      etags[i] = await send(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  await call('POST', `${route}/complete?key=${encodeURIComponent(key)}`, {
    parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })),
  });
  return { ms: performance.now() - start, key };
}
