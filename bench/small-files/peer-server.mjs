// The peer's server: one Node process serving the built Uppy page at / and @tus/server with
// @tus/file-store at /files/, so page and endpoint share an origin as they do with `ferry serve`.
// Usage: node peer-server.mjs PAGE_DIR DATA_DIR; prints `listening on http://127.0.0.1:PORT`.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join } from 'node:path';
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';

const [pageDir, dataDir] = process.argv.slice(2);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const tus = new Server({ path: '/files', datastore: new FileStore({ directory: dataDir }) });

const server = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/files' || path.startsWith('/files/')) return void tus.handle(req, res);
  const asked = join(pageDir, decodeURIComponent(path));
  const file = existsSync(asked) && statSync(asked).isFile() ? asked : join(pageDir, 'index.html');
  res.setHeader('content-type', types[extname(file)] ?? 'application/octet-stream');
  createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
