// The baseline: a server that only writes each request body to one file, then answers 204.
// Usage: node sink.mjs PORT FILE
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';

const [port, file] = process.argv.slice(2);
createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200).end('ok');
    return;
  }
  pipeline(req, createWriteStream(file)).then(
    () => res.writeHead(204).end(),
    () => res.writeHead(500).end(),
  );
}).listen(Number(port), '127.0.0.1');
