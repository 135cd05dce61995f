/**
 * The fake providers (`ferry-fakes`, from ferry-testkit) for the provider specs, and
 * `ferry` started against them: the fakes print their endpoints, app credentials and fixture
 * (every file's id, name and the sha256 an import must store) as one JSON line, and stop when
 * their stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type RunningFerry, repoRoot, type StartOptions, startFerry } from './ferry.ts';

/** The binary: `FERRY_FAKES_BIN`, else the debug build next to `ferry`. */
export const fakesBin = process.env.FERRY_FAKES_BIN ?? join(repoRoot, 'target', 'debug', 'ferry-fakes');

/** One fixture file: its provider id, the name an import stores, and that content's digest. */
export interface FixtureFile {
  id: string;
  name: string;
  size: number;
  sha256: string;
}

export interface Fixture {
  google: {
    authUrl: string;
    tokenUrl: string;
    apiUrl: string;
    key: string;
    secret: string;
    email: string;
    files: FixtureFile[];
    /** A live access token, as Google Identity Services hands one to a picker page. */
    pickerToken: string;
  };
  /** The Photos Picker API; every session picks `items` (a photo, then a video). */
  googlePhotos: {
    apiUrl: string;
    contentUrl: string;
    items: FixtureFile[];
  };
  instagram: {
    authUrl: string;
    tokenUrl: string;
    graphUrl: string;
    key: string;
    secret: string;
    username: string;
    media: FixtureFile[];
  };
  onedrive: {
    authUrl: string;
    tokenUrl: string;
    apiUrl: string;
    key: string;
    secret: string;
    mail: string;
    /** Ids are `<driveId>~<itemId>`, the `requestPath` ferry lists. */
    files: FixtureFile[];
  };
  box: {
    authUrl: string;
    tokenUrl: string;
    apiUrl: string;
    key: string;
    secret: string;
    login: string;
    files: FixtureFile[];
  };
  dropbox: {
    authUrl: string;
    tokenUrl: string;
    apiUrl: string;
    contentUrl: string;
    key: string;
    secret: string;
    email: string;
    /** Ids are the files' `path_lower`. */
    files: FixtureFile[];
  };
  unsplash: {
    apiUrl: string;
    key: string;
    /** Found by any search; `name` is the description plus `.jpg`. */
    photos: Omit<FixtureFile, 'size'>[];
  };
  zoom: {
    authUrl: string;
    tokenUrl: string;
    apiUrl: string;
    key: string;
    secret: string;
    email: string;
    /** The year folder the meeting is in, and the meeting folder's name. */
    year: string;
    meeting: string;
    /** Ids are `<meeting uuid>~<file id>`; names are what ferry lists. */
    files: FixtureFile[];
  };
  facebook: {
    authUrl: string;
    apiUrl: string;
    key: string;
    secret: string;
    email: string;
    album: string;
    /** Photos; names are their captions, digests of their largest rendition. */
    files: FixtureFile[];
  };
  /** A Nextcloud-like user collection (its folder `Holiday` shared by link). */
  webdav: {
    /** The collection without credentials, and with `user:password@` in it (Uppy's one field). */
    url: string;
    urlWithPassword: string;
    user: string;
    password: string;
    shareUrl: string;
    /** Ids are Companion's, `encodeURIComponent` of the path (`%2FHoliday%2Fnotes.txt`). */
    files: FixtureFile[];
  };
}

export interface RunningFakes {
  fixture: Fixture;
  process: ChildProcess;
  /** Sets a fault switch (`too-many dropbox 1 12`) and waits for the fakes to confirm it. */
  fault(line: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `ferry-fakes` with its fixture options (`['--paging-items', '1005']`...). */
export async function startFakes(args: string[] = []): Promise<RunningFakes> {
  const child = spawn(fakesBin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const fixture = await new Promise<Fixture>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('ferry-fakes printed nothing in 20 s')), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      ok(JSON.parse(line) as Fixture);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`ferry-fakes exited with ${code}`));
    });
  });
  return {
    fixture,
    process: child,
    fault(line: string) {
      return new Promise<void>((ok, fail) => {
        lines.once('line', (answer) => {
          const parsed = JSON.parse(answer) as { ok?: boolean; error?: string };
          if (parsed.ok) ok();
          else fail(new Error(`ferry-fakes refused ${line}: ${parsed.error}`));
        });
        child.stdin?.write(`${line}\n`);
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((ok) => child.once('exit', ok));
      // Closing stdin is the binary's stop signal.
      child.stdin?.end();
      await exited;
    },
  };
}

/** The secret the specs' `ferry` seals tokens with. */
export const SECRET = 'providers-e2e-secret';

/** `ferry serve` arguments that enable Drive and Instagram against the fakes. */
export function providerArgs(f: Fixture): string[] {
  return [
    '--secret',
    SECRET,
    '--google-key',
    f.google.key,
    '--google-secret',
    f.google.secret,
    '--google-auth-url',
    f.google.authUrl,
    '--google-token-url',
    f.google.tokenUrl,
    '--google-api-url',
    f.google.apiUrl,
    '--instagram-key',
    f.instagram.key,
    '--instagram-secret',
    f.instagram.secret,
    '--instagram-auth-url',
    f.instagram.authUrl,
    '--instagram-token-url',
    f.instagram.tokenUrl,
    '--instagram-graph-url',
    f.instagram.graphUrl,
    // The fakes' download and CDN URLs are on loopback, which the egress policy refuses otherwise.
    '--allow-local-urls',
  ];
}

/** `ferry serve` arguments that also enable OneDrive against its fake. */
export function onedriveArgs(f: Fixture): string[] {
  const o = f.onedrive;
  return [
    '--onedrive-key',
    o.key,
    '--onedrive-secret',
    o.secret,
    '--onedrive-auth-url',
    o.authUrl,
    '--onedrive-token-url',
    o.tokenUrl,
    '--onedrive-api-url',
    o.apiUrl,
  ];
}

/** `ferry serve` arguments that also enable Box against its fake. */
export function boxArgs(f: Fixture): string[] {
  const b = f.box;
  return [
    '--box-key',
    b.key,
    '--box-secret',
    b.secret,
    '--box-auth-url',
    b.authUrl,
    '--box-token-url',
    b.tokenUrl,
    '--box-api-url',
    b.apiUrl,
  ];
}

/** `ferry serve` arguments that also enable Dropbox against its fake. */
export function dropboxArgs(f: Fixture): string[] {
  const d = f.dropbox;
  return [
    '--dropbox-key',
    d.key,
    '--dropbox-secret',
    d.secret,
    '--dropbox-auth-url',
    d.authUrl,
    '--dropbox-token-url',
    d.tokenUrl,
    '--dropbox-api-url',
    d.apiUrl,
    '--dropbox-content-url',
    d.contentUrl,
  ];
}

/** `ferry serve` arguments that also enable Unsplash (a search provider) against its fake. */
export function unsplashArgs(f: Fixture): string[] {
  return ['--unsplash-key', f.unsplash.key, '--unsplash-api-url', f.unsplash.apiUrl];
}

/** `ferry serve` arguments that also enable `/google-picker/get` against the Photos fake. */
export function googlePickerArgs(f: Fixture): string[] {
  return [
    '--google-picker',
    '--google-photos-picker-url',
    f.googlePhotos.apiUrl,
    '--google-photos-content-url',
    f.googlePhotos.contentUrl,
  ];
}

/** `ferry serve` arguments that also enable Zoom against its fake. */
export function zoomArgs(f: Fixture): string[] {
  const z = f.zoom;
  return [
    '--zoom-key',
    z.key,
    '--zoom-secret',
    z.secret,
    '--zoom-auth-url',
    z.authUrl,
    '--zoom-token-url',
    z.tokenUrl,
    '--zoom-api-url',
    z.apiUrl,
  ];
}

/** `ferry serve` arguments that also enable Facebook against its fake. */
export function facebookArgs(f: Fixture): string[] {
  const b = f.facebook;
  return [
    '--facebook-key',
    b.key,
    '--facebook-secret',
    b.secret,
    '--facebook-auth-url',
    b.authUrl,
    '--facebook-api-url',
    b.apiUrl,
  ];
}

/** `ferry serve` arguments that also enable WebDAV (the fake is on loopback: `--allow-local-urls`). */
export function webdavArgs(_f: Fixture): string[] {
  return ['--webdav'];
}

/** `ferry` with the providers enabled against `fakes`, plus `extra` arguments. */
export function startFerryWithProviders(
  fakes: RunningFakes,
  extra: string[] = [],
  options: StartOptions = {},
): Promise<RunningFerry> {
  return startFerry([...providerArgs(fakes.fixture), ...extra], options);
}
