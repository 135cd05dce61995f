// One link import through a companion: POST /url/get (tus destination), follow the progress
// socket to success, print the elapsed seconds. Usage: node drive.mjs COMPANION SOURCE TUS_ENDPOINT SIZE
import WebSocket from 'ws';

const [companion, source, endpoint, size] = process.argv.slice(2);
const started = performance.now();
const res = await fetch(`${companion}/url/get`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify({
    fileId: 'bench',
    url: source,
    protocol: 'tus',
    endpoint,
    size: Number(size),
    metadata: { name: 'bench.bin', type: 'application/octet-stream' },
    headers: {},
  }),
});
const { token } = await res.json();
if (!token) throw new Error(`no token: ${res.status}`);
const ws = new WebSocket(`${companion.replace(/^http/, 'ws')}/api/${token}`);
const outcome = await new Promise((resolve) => {
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data));
    if (frame.action === 'success') resolve({ ok: true, url: frame.payload.url });
    if (frame.action === 'error') resolve({ ok: false, error: frame.payload.error?.message });
  });
  ws.on('error', (e) => resolve({ ok: false, error: String(e) }));
});
ws.close();
const seconds = (performance.now() - started) / 1000;
if (!outcome.ok) {
  console.error(`transfer failed: ${outcome.error}`);
  process.exit(1);
}
console.log(`${seconds.toFixed(3)} ${outcome.url}`);
