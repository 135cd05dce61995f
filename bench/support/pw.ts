/**
 * The bare DevTools driver's interface (`cdp.ts`) over Playwright, for benchmarks that report a
 * page as Playwright-driven runs see it (the usual way teams test their pages): the e2e suite's
 * launcher and flags, Playwright's own file picking, clicks and waits. Playwright turns on the
 * Network domain (and its other instrumentation) in every page; `cdp.ts` says what that costs.
 */
import type { CDPSession, Page } from 'playwright-core';
import { launchBrowser } from '../../e2e/support/browser.ts';
import type { CdpBrowser, CdpTab } from './cdp.ts';

export async function launchPlaywrightBrowser(): Promise<CdpBrowser> {
  const browser = await launchBrowser();
  return {
    async open(url) {
      const page: Page = await browser.context.newPage();
      const session: CDPSession = await browser.context.newCDPSession(page);
      await page.goto(url);
      const tab: CdpTab = {
        send: (method, params = {}) =>
          session.send(method as Parameters<CDPSession['send']>[0], params as never) as Promise<
            Record<string, unknown>
          >,
        on: (method, listener) => {
          session.on(method as Parameters<CDPSession['on']>[0], listener as never);
        },
        evaluate: (expression) => page.evaluate(expression),
        async waitFor(expression, { pollMs = 100, timeoutMs = 300_000 } = {}) {
          await page.waitForFunction(expression, undefined, { polling: pollMs, timeout: timeoutMs });
        },
        async setInputFiles(selector, paths) {
          await page.locator(selector).first().setInputFiles(paths, { timeout: 300_000 });
        },
        async click(selector) {
          await page.locator(selector).first().click();
        },
        async close() {
          await session.detach().catch(() => undefined);
          await page.close();
        },
      };
      return tab;
    },
    close: () => browser.close(),
  };
}
