/**
 * `enabledProviders`: what `GET /providers` enables, as the widget shows it; search providers
 * (Unsplash, marked `search: true`) are left out since the widget has no search view.
 */

import { describe, expect, it } from 'vitest';
import { enabledProviders } from './providers.ts';

const answer = (body: unknown) => async () => new Response(JSON.stringify(body), { status: 200 });

describe('enabledProviders', () => {
  it('lists sign-in providers and leaves search providers out', async () => {
    const fetchImpl = answer({
      providers: [
        { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
        { id: 'unsplash', name: 'Unsplash', rootFolder: '', supportsRefreshToken: false, search: true },
      ],
    });
    expect(await enabledProviders('https://ferry.example', fetchImpl)).toEqual([
      { id: 'drive', name: 'Google Drive', rootFolder: 'root', supportsRefreshToken: true },
    ]);
  });
});
