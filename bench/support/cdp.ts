/**
 * A bare Chrome DevTools Protocol driver over `--remote-debugging-pipe`, for benchmarks whose
 * figure is the page's own network work.
 *
 * Why not Playwright here: Playwright turns on the DevTools Network domain in every page it drives,
 * and Chromium then reports each request to the client. Measured on this machine, 500 bare
 * `XMLHttpRequest` POSTs of 10 KiB take 0.77–0.96 s without it and 1.39–1.53 s with it (about
 * 1.2 ms a request). That cost is nothing a person's browser pays, and it grows with the number of
 * requests, so it narrows the gap between a page that sends one request per file and one that
 * sends two. This driver enables only what it uses: Runtime for evaluation, DOM for the file
 * input, Input for the click and Performance for the page's main-thread counters.
 * `DEVTOOLS_NETWORK=1` (or `launchCdpBrowser({ network: true })`) turns the Network domain on as
 * well, to measure a page as Playwright-driven runs see it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { chromiumFlags, chromiumPath } from '../../e2e/support/browser.ts';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

/** One attached page: evaluate, wait for a condition, pick files, click. */
export interface CdpTab {
  send(method: string, params?: Params): Promise<Result>;
  /** Calls `listener` with the params of each `method` event of this page (e.g. tracing data). */
  on(method: string, listener: (params: Result) => void): void;
  /** The value of `expression` in the page (awaited when it is a promise). */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls `expression` every `pollMs` until it is truthy, or fails after `timeoutMs`. */
  waitFor(expression: string, options?: { pollMs?: number; timeoutMs?: number }): Promise<void>;
  /** Sets `paths` as the picked files of the first element matching `selector`, firing `change`. */
  setInputFiles(selector: string, paths: string[]): Promise<void>;
  /** A real mouse click (press and release) at the centre of the first element matching `selector`. */
  click(selector: string): Promise<void>;
  close(): Promise<void>;
}

export interface CdpBrowser {
  open(url: string): Promise<CdpTab>;
  close(): Promise<void>;
}

/**
 * Launches the test Chromium (same flags as the e2e suite) with a pipe for DevTools; with
 * `network` (default: `DEVTOOLS_NETWORK=1`) every page gets the Network domain, as under Playwright.
 */
export async function launchCdpBrowser(options: { network?: boolean } = {}): Promise<CdpBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'ferry-chromium-cdp-'));
  const child = spawn(
    chromiumPath,
    [...chromiumFlags(), '--remote-debugging-pipe', `--user-data-dir=${userDataDir}`, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const connection = connect(child);
  const network = options.network ?? process.env.DEVTOOLS_NETWORK === '1';
  return {
    async open(url) {
      const { targetId } = await connection.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await connection.send('Target.attachToTarget', { targetId, flatten: true });
      const send = (method: string, params: Params = {}) => connection.send(method, params, sessionId as string);
      if (network) await send('Network.enable');
      await send('Page.navigate', { url });
      const evaluate = async <T>(expression: string): Promise<T> => {
        const reply = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
        if (reply.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(reply.exceptionDetails)}`);
        return (reply.result as { value: T }).value;
      };
      const elementCentre = (selector: string) =>
        evaluate<{ x: number; y: number }>(`(() => {
          const box = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
          return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
        })()`);
      return {
        send,
        on: (method, listener) => connection.listen(sessionId as string, method, listener),
        evaluate,
        async waitFor(expression, { pollMs = 100, timeoutMs = 300_000 } = {}) {
          const deadline = Date.now() + timeoutMs;
          while (!(await evaluate<boolean>(`!!(${expression})`))) {
            if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
            await new Promise((ok) => setTimeout(ok, pollMs));
          }
        },
        async setInputFiles(selector, paths) {
          const { result } = await send('Runtime.evaluate', {
            expression: `document.querySelector(${JSON.stringify(selector)})`,
          });
          await send('DOM.setFileInputFiles', { files: paths, objectId: (result as { objectId: string }).objectId });
        },
        async click(selector) {
          await evaluate(`document.querySelector(${JSON.stringify(selector)}).scrollIntoView({ block: 'center' })`);
          const { x, y } = await elementCentre(selector);
          for (const type of ['mousePressed', 'mouseReleased'])
            await send('Input.dispatchMouseEvent', { type, x, y, button: 'left', clickCount: 1 });
        },
        async close() {
          await connection.send('Target.closeTarget', { targetId });
        },
      };
    },
    async close() {
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill('SIGTERM');
      await exited;
      // Chromium's helpers may still be writing its profile for a moment after it exits.
      await rm(userDataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** DevTools messages over fds 3 (to Chromium) and 4 (from it), each JSON text ending in NUL. */
function connect(child: ChildProcess) {
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  const waiting = new Map<number, { ok: (r: Result) => void; fail: (e: Error) => void; method: string }>();
  const listeners = new Map<string, (params: Result) => void>();
  let lastId = 0;
  let pending = '';
  fromBrowser.setEncoding('utf8');
  fromBrowser.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\0'); end >= 0; end = pending.indexOf('\0')) {
      const message = JSON.parse(pending.slice(0, end));
      pending = pending.slice(end + 1);
      if (message.id === undefined) {
        listeners.get(`${message.sessionId}/${message.method}`)?.(message.params);
        continue;
      }
      const caller = waiting.get(message.id);
      if (!caller) continue;
      waiting.delete(message.id);
      if (message.error) caller.fail(new Error(`${caller.method}: ${message.error.message}`));
      else caller.ok(message.result);
    }
  });
  child.once('exit', () => {
    for (const caller of waiting.values()) caller.fail(new Error(`${caller.method}: Chromium exited`));
  });
  return {
    listen(sessionId: string, method: string, listener: (params: Result) => void) {
      listeners.set(`${sessionId}/${method}`, listener);
    },
    send(method: string, params: Params = {}, sessionId?: string): Promise<Result> {
      lastId += 1;
      const id = lastId;
      return new Promise((ok, fail) => {
        waiting.set(id, { ok, fail, method });
        toBrowser.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
      });
    },
  };
}
