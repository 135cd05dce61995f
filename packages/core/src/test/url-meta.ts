/**
 * A companion stand-in on loopback for link imports: `POST /url/meta` knows one file
 * (`http://origin.test/ok.bin`, 42 bytes of `application/x-test`) and answers 424 for the rest.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export interface UrlMetaServer {
  /** `http://127.0.0.1:{port}`, no trailing slash. */
  base: string;
  close(): Promise<void>;
}

export async function urlMetaServer(): Promise<UrlMetaServer> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const { url } = JSON.parse(body) as { url: string };
      res.setHeader('content-type', 'application/json');
      if (req.url === '/url/meta' && url === 'http://origin.test/ok.bin') {
        res.end(JSON.stringify({ name: 'ok.bin', type: 'application/x-test', size: 42 }));
      } else {
        res.statusCode = 424;
        res.end(JSON.stringify({ message: 'the source answered 404' }));
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

/** The server for a whole spec file: started before its tests, closed after; `base` once started. */
export function urlMetaForSuite(): { readonly base: string } {
  let server: UrlMetaServer | undefined;
  beforeAll(async () => {
    server = await urlMetaServer();
  });
  afterAll(() => server?.close());
  return {
    get base() {
      if (!server) throw new Error('the /url/meta server starts in beforeAll');
      return server.base;
    },
  };
}
