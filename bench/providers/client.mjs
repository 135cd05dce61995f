// The client side of bench/providers, speaking Companion's provider wire to `ferry` (Node's
// built-in fetch and WebSocket; run with --experimental-websocket on Node 20), one for every
// provider (PROVIDER: drive, dropbox, box, onedrive; ids are the fakes' `bench` ids, which are
// each provider's requestPath once URL-encoded). Modes:
//   list COMPANION PROVIDER TOKEN FOLDER  page through /PROVIDER/list/FOLDER to the end
//   import COMPANION PROVIDER TOKEN ENDPOINT CONC FIXTURE_JSON
//                                         POST /PROVIDER/get/{id} for each file of the fixture
//                                         (a JSON array of {id, name, size, sha256}), CONC at a
//                                         time, to the tus ENDPOINT, following each progress
//                                         socket to success; then reads every stored file back
//                                         and compares its sha256 with the fixture's
//   link COMPANION URL ENDPOINT SIZE      one link import (POST /url/get), the same engine's
//                                         ingest speed from a plain origin, for reference
//   origin PORT FILE                      serves FILE (with Content-Length) for `link`
// Each prints one JSON line with the figures.
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';

const [mode, companion, ...rest] = process.argv.slice(2);
const json = { accept: 'application/json' };

let provider = 'drive';

async function list(token, folder) {
  const started = performance.now();
  let path = encodeURIComponent(folder);
  let pages = 0;
  let items = 0;
  let slowest = 0;
  while (path !== null) {
    const t0 = performance.now();
    const res = await fetch(`${companion}/${provider}/list/${path}`, {
      headers: { ...json, 'uppy-auth-token': token },
    });
    if (!res.ok) throw new Error(`list ${path}: ${res.status} ${await res.text()}`);
    const page = await res.json();
    slowest = Math.max(slowest, performance.now() - t0);
    pages += 1;
    items += page.items.length;
    path = page.nextPagePath ?? null;
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, pages, items, pagesPerSecond: pages / seconds, slowestPageMs: slowest };
}

/** Follows the progress socket of a started transfer until success; the stored URL. */
function follow(transfer) {
  const ws = new WebSocket(`${companion.replace(/^http/, 'ws')}/api/${transfer}`);
  return new Promise((resolve, reject) => {
    ws.onmessage = (ev) => {
      const frame = JSON.parse(String(ev.data));
      if (frame.action === 'success') {
        ws.close();
        resolve(frame.payload.url);
      }
      if (frame.action === 'error') {
        ws.close();
        reject(new Error(frame.payload.error?.message ?? 'transfer failed'));
      }
    };
    ws.onerror = () => reject(new Error('progress socket failed'));
  });
}

async function start(path, body, token) {
  const headers = { ...json, 'content-type': 'application/json' };
  if (token) headers['uppy-auth-token'] = token;
  const res = await fetch(`${companion}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok || !answer.token) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer.token;
}

async function sha256Of(url) {
  const res = await fetch(url);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of res.body) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

async function importAll(token, endpoint, concurrency, files) {
  const started = performance.now();
  const urls = new Array(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      const f = files[i];
      const body = {
        fileId: f.id,
        protocol: 'tus',
        endpoint,
        size: f.size,
        metadata: { name: f.name, type: 'application/octet-stream' },
        headers: {},
      };
      urls[i] = await follow(await start(`/${provider}/get/${encodeURIComponent(f.id)}`, body, token));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  const seconds = (performance.now() - started) / 1000;
  const bytes = files.reduce((n, f) => n + f.size, 0);
  // Byte-exact or nothing: every stored file read back.
  let exact = 0;
  for (const [i, f] of files.entries()) {
    const stored = await sha256Of(urls[i]);
    if (stored.sha256 !== f.sha256 || stored.size !== f.size) {
      throw new Error(`${f.name}: stored ${stored.size} bytes sha256 ${stored.sha256}, want ${f.size} ${f.sha256}`);
    }
    exact += 1;
  }
  return {
    seconds,
    files: files.length,
    bytes,
    mibPerSecond: bytes / 1048576 / seconds,
    filesPerSecond: files.length / seconds,
    exact,
  };
}

async function link(url, endpoint, size) {
  const started = performance.now();
  const body = { fileId: url, url, protocol: 'tus', endpoint, size, metadata: { name: 'link.bin' }, headers: {} };
  const stored = await follow(await start('/url/get', body));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, bytes: size, mibPerSecond: size / 1048576 / seconds, url: stored };
}

if (mode === 'origin') {
  const [file] = rest;
  const size = statSync(file).size;
  createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file, { highWaterMark: 1 << 20 }).pipe(res);
  }).listen(Number(companion), '127.0.0.1');
} else {
  let out;
  if (mode === 'list') {
    provider = rest[0];
    out = await list(rest[1], rest[2]);
  } else if (mode === 'import') {
    provider = rest[0];
    const files = JSON.parse(readFileSync(rest[4], 'utf8'));
    out = await importAll(rest[1], rest[2], Number(rest[3]), files);
  } else if (mode === 'link') out = await link(rest[0], rest[1], Number(rest[2]));
  else {
    console.error('usage: node client.mjs list|import|link|origin ...');
    process.exit(2);
  }
  console.log(JSON.stringify(out));
}
