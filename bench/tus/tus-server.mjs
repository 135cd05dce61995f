// @tus/server with @tus/file-store on loopback: the peer ferry is timed against.
// Usage: node tus-server.mjs PORT DIRECTORY
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';

const [port, directory] = process.argv.slice(2);
const server = new Server({ path: '/files', datastore: new FileStore({ directory }) });
server.listen({ host: '127.0.0.1', port: Number(port) });
