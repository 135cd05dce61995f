/**
 * `enabledProviders`: what `GET /providers` enables, as the widget shows it, search providers
 * (Unsplash, marked `search: true`), form sign-in providers (WebDAV, `simpleAuth: true`) and
 * Google's pickers (`picker: true`, told apart by id) included as such, an unknown picker left
 * out; `knownProviders`: the ids, names and roots a page can name without asking (a
 * stock Companion has no `GET /providers`).
 */

import { describe, expect, it } from 'vitest';
import { enabledProviders, knownProviders } from './providers.ts';

const answer = (body: unknown) => async () => new Response(JSON.stringify(body), { status: 200 });

describe('enabledProviders', () => {
  it('lists sign-in, search, form sign-in providers and known pickers, marked as such', async () => {
    const fetchImpl = answer({
      providers: [
        { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
        { id: 'unsplash', name: 'Unsplash', rootFolder: '', supportsRefreshToken: false, search: true },
        { id: 'google-drive-picker', name: 'Google Drive Picker', picker: true },
        { id: 'google-photos-picker', name: 'Google Photos Picker', picker: true },
        { id: 'another-picker', name: 'Another', picker: true },
        { id: 'box' },
        { id: 'webdav', name: 'WebDAV', rootFolder: '', supportsRefreshToken: false, simpleAuth: true },
      ],
    });
    expect(await enabledProviders('https://ferry.example', fetchImpl)).toEqual([
      { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
      { id: 'unsplash', name: 'Unsplash', rootFolder: '', supportsRefreshToken: false, search: true },
      {
        id: 'google-drive-picker',
        name: 'Google Drive Picker',
        rootFolder: '',
        supportsRefreshToken: false,
        picker: 'drive',
      },
      {
        id: 'google-photos-picker',
        name: 'Google Photos Picker',
        rootFolder: '',
        supportsRefreshToken: false,
        picker: 'photos',
      },
      // What the answer leaves out comes from the known entry.
      { id: 'box', name: 'Box', rootFolder: '0', supportsRefreshToken: true },
      { id: 'webdav', name: 'WebDAV', rootFolder: '', supportsRefreshToken: false, simpleAuth: true },
    ]);
  });
});

describe('knownProviders', () => {
  it("names Companion's providers with their roots, Unsplash as a search provider", () => {
    const table = Object.values(knownProviders).map((p) => [p.id, p.name, p.rootFolder, p.search === true]);
    expect(table).toEqual(
      expect.arrayContaining([
        ['dropbox', 'Dropbox', '', false],
        ['box', 'Box', '0', false],
        ['onedrive', 'OneDrive', '', false],
        ['unsplash', 'Unsplash', '', true],
      ]),
    );
  });
});
