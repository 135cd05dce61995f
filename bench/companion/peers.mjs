// The Node peers, on loopback: `origin PORT FILE` (a static file with Content-Length),
// `tus PORT DIR` (@tus/server + @tus/file-store at /files), `companion PORT` (Uppy's
// Companion 6.2.2 standalone app, configured by the COMPANION_* environment).
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';

const [role, port, arg] = process.argv.slice(2);

if (role === 'origin') {
  const size = statSync(arg).size;
  createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
    if (req.method === 'HEAD') return res.end();
    createReadStream(arg, { highWaterMark: 1 << 20 }).pipe(res);
  }).listen(Number(port), '127.0.0.1', () => console.log('ready'));
} else if (role === 'tus') {
  const { FileStore } = await import('@tus/file-store');
  const { Server } = await import('@tus/server');
  const server = new Server({ path: '/files', datastore: new FileStore({ directory: arg }) });
  server.listen({ host: '127.0.0.1', port: Number(port) }, () => console.log('ready'));
} else if (role === 'companion') {
  // The package's `exports` hide these files; import them by path (peers.md's recipe).
  const lib = new URL('./node_modules/@uppy/companion/lib/', import.meta.url);
  const companion = await import(new URL('companion.js', lib).href);
  const { default: standalone } = await import(new URL('standalone/index.js', lib).href);
  const { app } = standalone();
  const server = app.listen(Number(port), '127.0.0.1', () => console.log('ready'));
  companion.socket(server);
} else {
  console.error('usage: node peers.mjs origin|tus|companion PORT [ARG]');
  process.exit(2);
}
