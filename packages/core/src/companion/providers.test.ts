/**
 * `enabledProviders`: what `GET /providers` enables, as the widget shows it; search providers
 * (Unsplash, marked `search: true`) and Google's pickers (`picker: true`) are left out since the
 * widget has no search or picker view.
 */

import { describe, expect, it } from 'vitest';
import { enabledProviders } from './providers.ts';

const answer = (body: unknown) => async () => new Response(JSON.stringify(body), { status: 200 });

describe('enabledProviders', () => {
  it('lists sign-in providers and leaves search providers and pickers out', async () => {
    const fetchImpl = answer({
      providers: [
        { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
        { id: 'unsplash', name: 'Unsplash', rootFolder: '', supportsRefreshToken: false, search: true },
        { id: 'google-drive-picker', name: 'Google Drive Picker', picker: true },
        { id: 'google-photos-picker', name: 'Google Photos Picker', picker: true },
      ],
    });
    expect(await enabledProviders('https://ferry.example', fetchImpl)).toEqual([
      { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
    ]);
  });
});
