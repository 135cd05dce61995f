/**
 * What Google's pickers need from the page, behind one seam so `google-picker.ts` can be tested
 * without Google: loading Google's scripts once each, an access token from Google Identity
 * Services (its own consent popup, for the non-restricted `drive.file` or the Photos Picker
 * scope), and Google's Drive Picker dialog (an overlay in the page, from `gapi`). The script
 * URLs are options, so a page can serve them through a proxy (or a test, from fakes).
 */

/** Where Google's scripts and APIs are; each defaults to Google's own. */
export interface GoogleUrls {
  /** Google Identity Services (the token client). */
  identity: string;
  /** `gapi`, which loads the Drive Picker. */
  api: string;
  /** The Photos Picker API (`/v1/sessions`, `/v1/mediaItems` are appended). */
  photos: string;
}

export const googleUrls: GoogleUrls = {
  identity: 'https://accounts.google.com/gsi/client',
  api: 'https://apis.google.com/js/api.js',
  photos: 'https://photospicker.googleapis.com',
};

/** The scopes the pickers ask: neither is restricted, so no security review for the app. */
export const pickerScopes = {
  drive: 'https://www.googleapis.com/auth/drive.file',
  photos: 'https://www.googleapis.com/auth/photospicker.mediaitems.readonly',
} as const;

/** An access token and when it stops working (ms since the epoch). */
export interface GoogleToken {
  accessToken: string;
  expiresAt: number;
}

/** A document the Drive Picker hands back. */
export interface PickedDoc {
  id: string;
  name?: string;
  mimeType?: string;
  sizeBytes?: number | string;
}

export interface DrivePickerOptions {
  token: string;
  apiKey: string;
  appId: string;
}

/** The page's side of the pickers (a fake in unit tests). */
export interface GoogleEnv {
  /** Loads what `kind`'s picker needs (Identity Services; `gapi` and its picker for Drive). */
  load(kind: 'drive' | 'photos', urls: GoogleUrls): Promise<void>;
  /** Asks Google Identity Services for a token with `scope` (its consent popup when needed). */
  requestToken(clientId: string, scope: string): Promise<GoogleToken>;
  /** Shows the Drive Picker; the picked documents, or null when the person cancelled. */
  showDrivePicker(options: DrivePickerOptions): Promise<PickedDoc[] | null>;
}

// Google's globals, typed as far as they are used here.
interface TokenResponse {
  access_token?: string;
  expires_in?: number | string;
  error?: string;
  error_description?: string;
}
interface GoogleGlobal {
  accounts: {
    oauth2: {
      initTokenClient(config: {
        client_id: string;
        scope: string;
        callback(response: TokenResponse): void;
        error_callback?(error: { type?: string; message?: string }): void;
      }): { requestAccessToken(overrides?: { prompt?: string }): void };
    };
  };
  // biome-ignore lint/suspicious/noExplicitAny: Google's picker builder is a wide fluent API
  picker: any;
}
interface GapiGlobal {
  load(libraries: string, done: () => void): void;
}
type GoogleWindow = Window & { google?: GoogleGlobal; gapi?: GapiGlobal };

const loaded = new Map<string, Promise<void>>();

/** Adds `<script src>` once per page; a failed load may be tried again. */
function script(src: string): Promise<void> {
  let done = loaded.get(src);
  if (!done) {
    done = new Promise<void>((resolve, reject) => {
      const el = document.createElement('script');
      el.src = src;
      el.async = true;
      el.onload = () => resolve();
      el.onerror = () => {
        loaded.delete(src);
        el.remove();
        reject(new Error(`Could not load ${src}`));
      };
      document.head.append(el);
    });
    loaded.set(src, done);
  }
  return done;
}

function google(): GoogleGlobal {
  const g = (window as GoogleWindow).google;
  if (!g) throw new Error('Google Identity Services did not load');
  return g;
}

/** The real page: Google's scripts in `document`, Google's globals on `window`. */
export const browserGoogleEnv: GoogleEnv = {
  async load(kind, urls) {
    const identity = script(urls.identity);
    if (kind === 'drive') {
      await script(urls.api);
      const gapi = (window as GoogleWindow).gapi;
      if (!gapi) throw new Error('gapi did not load');
      await new Promise<void>((resolve) => gapi.load('picker', resolve));
    }
    await identity;
  },

  requestToken(clientId, scope) {
    return new Promise<GoogleToken>((resolve, reject) => {
      const client = google().accounts.oauth2.initTokenClient({
        client_id: clientId,
        scope,
        callback: (r) => {
          if (r.error || !r.access_token) {
            reject(new Error(r.error_description ?? r.error ?? 'Google gave no access token'));
            return;
          }
          // Google's tokens last an hour; a minute of margin so a pick never starts on a dying one.
          const seconds = Number(r.expires_in ?? 3600);
          resolve({ accessToken: r.access_token, expiresAt: Date.now() + (seconds - 60) * 1000 });
        },
        error_callback: (e) => reject(new Error(e.message ?? e.type ?? 'Google sign-in failed')),
      });
      client.requestAccessToken();
    });
  },

  showDrivePicker({ token, apiKey, appId }) {
    const picker = google().picker;
    return new Promise<PickedDoc[] | null>((resolve) => {
      const view = new picker.DocsView(picker.ViewId.DOCS).setIncludeFolders(true).setSelectFolderEnabled(false);
      const dialog = new picker.PickerBuilder()
        .enableFeature(picker.Feature.MULTISELECT_ENABLED)
        .setDeveloperKey(apiKey)
        .setAppId(appId)
        .setOAuthToken(token)
        .addView(view)
        .setCallback((data: { action?: string; docs?: PickedDoc[] }) => {
          // 'loaded' and other notices are not an answer.
          if (data.action === picker.Action.PICKED) resolve(data.docs ?? []);
          else if (data.action === picker.Action.CANCEL) resolve(null);
        })
        .build();
      dialog.setVisible(true);
    });
  },
};
