import { Ferry } from '@ferry/core';
import { expect, test } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { urlMetaForSuite } from '../../../core/src/test/url-meta.ts';
import { importLinkWithToast } from './LinkImport.tsx';

// A companion stand-in on loopback: /url/meta knows one file and answers 424 for the rest.
const meta = urlMetaForSuite();

const t = (key: string) => key;

test('an import adds the file through the engine companion, or through the deprecated override', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader(), companionUrl: meta.base });
  const id = await importLinkWithToast(ferry, t, 'origin.test/ok.bin');
  expect(ferry.getFile(id ?? '')).toMatchObject({ name: 'ok.bin', isRemote: true });
  const other = new Ferry({ uploader: new ManualUploader() });
  expect(await importLinkWithToast(other, t, 'origin.test/ok.bin', meta.base)).toBe(other.getFiles()[0]?.id);
  expect(other.getFiles()).toHaveLength(1);
  ferry.destroy();
  other.destroy();
});

test('an error answer toasts failedToFetchFile, an unreachable companion failedToFetch, both for 4 s', async () => {
  const ferry = new Ferry({ uploader: new ManualUploader(), companionUrl: meta.base });
  expect(await importLinkWithToast(ferry, t, 'http://origin.test/gone')).toBeNull();
  expect(await importLinkWithToast(ferry, t, 'http://origin.test/ok.bin', 'http://127.0.0.1:9')).toBeNull();
  expect(await importLinkWithToast(ferry, t, 'ftp://origin.test/x')).toBeNull();
  expect(ferry.getState().info.map((i) => [i.message, i.duration])).toEqual([
    ['failedToFetchFile', 4000],
    ['failedToFetch', 4000],
    ['incorrectUrl', 4000],
  ]);
  expect(ferry.getState().info[0]?.details).toBe('the source answered 404');
  expect(ferry.getFiles()).toEqual([]);
  ferry.destroy();
});
