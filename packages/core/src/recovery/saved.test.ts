/** What a file's recovery record leaves out: its bytes, preview, ghost mark, and a rate-limit wait. */
import { describe, expect, it } from 'vitest';
import type { FerryFile } from '../types.ts';
import { saved } from './table.ts';

describe('saved', () => {
  it('keeps no rate-limit wait: it belonged to the transfer running before the reload', () => {
    const file = {
      id: 'f1',
      name: 'beach.jpg',
      serverToken: 'tok',
      waiting: { seconds: 7, retryAfter: 12, message: 'Dropbox is limiting requests', attempt: 1 },
    } as unknown as FerryFile;
    const record = saved(file);
    expect('waiting' in record).toBe(false);
    expect(record).toMatchObject({ id: 'f1', serverToken: 'tok' });
  });
});
