// N concurrent tus uploads of SIZE random bytes each (POST then one PATCH), timed end to end;
// every stored file is checked by sha256 afterwards. Prints one JSON line.
// Usage: node concurrent.mjs BASE_URL STORE_DIR N SIZE
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const [base, storeDir, n, size] = process.argv.slice(2);
const count = Number(n);
const bodies = Array.from({ length: count }, () => randomBytes(Number(size)));
const digest = (b) => createHash('sha256').update(b).digest('hex');

async function one(body) {
  const started = performance.now();
  const created = await fetch(`${base}/files/`, {
    method: 'POST',
    headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': String(body.length) },
  });
  if (created.status !== 201) throw new Error(`create: ${created.status}`);
  const location = new URL(created.headers.get('location'), base).href;
  const patched = await fetch(location, {
    method: 'PATCH',
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Offset': '0',
      'Content-Type': 'application/offset+octet-stream',
    },
    body,
  });
  if (patched.status !== 204) throw new Error(`patch: ${patched.status}`);
  return { ms: performance.now() - started, id: location.split('/').pop() };
}

const started = performance.now();
const results = await Promise.all(bodies.map(one));
const seconds = (performance.now() - started) / 1000;
let ok = true;
for (const [i, { id }] of results.entries()) {
  const stored = await readFile(join(storeDir, id));
  if (digest(stored) !== digest(bodies[i])) ok = false;
}
const ms = results.map((r) => r.ms).sort((a, b) => a - b);
const pct = (p) => ms[Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1)];
console.log(JSON.stringify({ seconds, perSecond: count / seconds, p50: pct(50), p99: pct(99), ok }));
