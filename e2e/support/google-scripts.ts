/**
 * Fakes of what Google serves to a picker page, which cannot load here (no internet), routed
 * into a Playwright page: Google Identity Services (`accounts.google.com/gsi/client`: a token
 * client that hands out `token` at once and records the scopes asked), `gapi`
 * (`apis.google.com/js/api.js`: `gapi.load('client:picker')`, `gapi.client.load`) with a
 * `google.picker` that renders the picked-from documents as a small dialog with checkboxes and a
 * Select button, the token check (`www.googleapis.com/oauth2/v1/tokeninfo`), and the Photos
 * Picker API (`photospicker.googleapis.com`) forwarded to the fake from `ferry-fakes`. Only what
 * Uppy's picker code calls is implemented; that code and ferry's route are what the spec tests.
 */
import type { Page, Route } from 'playwright-core';

/** A document the fake Drive Picker offers. */
export interface PickerDoc {
  id: string;
  name: string;
  mimeType: string;
}

const cors = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, content-type',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
};

const gsi = (token: string) => `
window.google = window.google || {};
window.__gisScopes = [];
window.google.accounts = { oauth2: {
  initTokenClient(config) {
    return { requestAccessToken() {
      window.__gisScopes.push(config.scope);
      setTimeout(() => config.callback({ access_token: ${JSON.stringify(token)}, token_type: 'Bearer',
        expires_in: 3599, scope: config.scope }), 0);
    } };
  },
  revoke(token, done) { if (done) done(); },
} };`;

const gapi = (docs: PickerDoc[]) => `
const docs = ${JSON.stringify(docs)};
const chain = (target) => new Proxy(target, { get: (t, k) => k in t ? t[k] : () => chain(t) });
function picker() {
  window.google = window.google || {};
  window.google.picker = {
    Action: { PICKED: 'picked', CANCEL: 'cancel', LOADED: 'loaded', ERROR: 'error' },
    Feature: { NAV_HIDDEN: 'nav', MULTISELECT_ENABLED: 'multi' },
    ViewId: { DOCS: 'all' },
    DocsViewMode: { LIST: 'list' },
    DocsView: function () { return chain({}); },
    PickerBuilder: function () {
      const seen = {};
      window.__picker = seen;
      return chain({
        setDeveloperKey(k) { seen.developerKey = k; return this; },
        setAppId(a) { seen.appId = a; return this; },
        setOAuthToken(t) { seen.token = t; return this; },
        setCallback(c) { seen.callback = c; return this; },
        build() {
          const dialog = document.createElement('div');
          dialog.setAttribute('role', 'dialog');
          dialog.setAttribute('aria-label', 'Google Picker');
          for (const d of docs) {
            const label = document.createElement('label');
            const box = document.createElement('input');
            box.type = 'checkbox';
            box.value = d.id;
            label.append(box, d.name);
            dialog.append(label);
          }
          const select = document.createElement('button');
          select.textContent = 'Select';
          select.onclick = () => {
            const ids = [...dialog.querySelectorAll('input:checked')].map((b) => b.value);
            dialog.remove();
            seen.callback({ action: 'picked', docs: docs.filter((d) => ids.includes(d.id)) });
          };
          dialog.append(select);
          return {
            setVisible() { document.body.append(dialog); seen.callback({ action: 'loaded' }); },
            dispose() { dialog.remove(); },
          };
        },
      });
    },
  };
}
window.gapi = {
  load(libs, done) { if (String(libs).includes('picker')) picker(); setTimeout(done, 0); },
  client: { load() { return Promise.resolve(); } },
};`;

async function script(route: Route, body: string) {
  await route.fulfill({ status: 200, contentType: 'text/javascript', body });
}

/** Routes Google's scripts and APIs on `page` to fakes; `photosApiUrl` is the Photos fake. */
export async function routeGoogle(page: Page, token: string, docs: PickerDoc[], photosApiUrl: string) {
  await page.route('https://accounts.google.com/gsi/client', (r) => script(r, gsi(token)));
  await page.route('https://apis.google.com/js/api.js', (r) => script(r, gapi(docs)));
  await page.route('https://www.googleapis.com/oauth2/v1/tokeninfo*', async (r) => {
    const asked = new URL(r.request().url()).searchParams.get('access_token');
    const ok = asked === token;
    await r.fulfill({
      status: ok ? 200 : 400,
      headers: cors,
      json: ok ? { expires_in: 3500 } : { error: 'invalid_token' },
    });
  });
  await page.route('https://photospicker.googleapis.com/**', async (r) => {
    if (r.request().method() === 'OPTIONS') return r.fulfill({ status: 204, headers: cors });
    const url = new URL(r.request().url());
    const response = await r.fetch({ url: `${photosApiUrl}${url.pathname}${url.search}` });
    await r.fulfill({ response, headers: { ...response.headers(), ...cors } });
  });
}
