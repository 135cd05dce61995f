/**
 * The one page driver of the browser benchmarks (bench/core, bench/dashboard): serves a built
 * page directory on loopback and opens it in the end-to-end suite's Chromium
 * (`e2e/support/browser.ts`, the same flags as the tests), so the bench browser is the test
 * browser. Node 20 runs no TypeScript: each suite's run.sh bundles its driver with rolldown.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../../e2e/support/browser.ts';

const types: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
};

/** Serves `dir` (a Vite build) on a free loopback port; unknown paths get its index.html. */
function serve(dir: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    const file = existsSync(path) && statSync(path).isFile() ? path : join(dir, 'index.html');
    res.setHeader('content-type', types[extname(file)] ?? 'application/octet-stream');
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

export interface OpenedPage {
  tab: Page;
  /** Closes the tab and stops serving its directory. */
  close(): Promise<void>;
}

export interface PageDriver {
  /**
   * Serves `dir` and opens it in a fresh tab (with `query`, e.g. `?recovery=off`), waiting until
   * the expression `ready` is truthy.
   */
  open(dir: string, ready: string, query?: string): Promise<OpenedPage>;
  close(): Promise<void>;
}

export async function startPageDriver(): Promise<PageDriver> {
  const browser = await launchBrowser();
  return {
    async open(dir, ready, query = '') {
      const server = await serve(dir);
      const tab = await browser.context.newPage();
      await tab.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${query}`);
      await tab.waitForFunction(ready);
      return {
        tab,
        async close() {
          await tab.close();
          await new Promise((ok) => server.close(ok));
        },
      };
    },
    close: () => browser.close(),
  };
}

/** The results directory a driver was given as its first argument. */
export function resultsDir(usage: string): string {
  const dir = process.argv[2];
  if (!dir) throw new Error(`usage: ${usage}`);
  return dir;
}
