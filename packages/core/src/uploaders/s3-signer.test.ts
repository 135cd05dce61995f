import { describe, expect, test } from 'vitest';
import { validateBatch, validateCreate, validateParams, validateParts } from './s3-signer.ts';
import { readS3Xml } from './s3-xml.ts';

describe('validateParams', () => {
  test('accepts put and post with optional fields and headers', () => {
    expect(validateParams({ method: 'put', url: 'https://b/k', headers: { 'content-type': 'a/b' } })).toEqual({
      method: 'PUT',
      url: 'https://b/k',
      fields: {},
      headers: { 'content-type': 'a/b' },
    });
    expect(validateParams({ url: 'https://b/', fields: { key: 'k' } }).method).toBe('POST');
  });

  test.each([
    null,
    'https://b/k',
    {},
    { url: 5 },
    { url: '' },
    { url: 'https://b/k', method: 'patch' },
    { url: 'https://b/k', fields: { a: 1 } },
    { url: 'https://b/k', fields: ['a'] },
    { url: 'https://b/k', headers: 'x' },
  ])('refuses %j with a clear message', (answer) => {
    expect(() => validateParams(answer)).toThrow(
      /^S3 upload parameters must be an object with a string `url`, optional `fields` and `method` put or post, got /,
    );
  });
});

describe('validateCreate', () => {
  test('needs uploadId and key', () => {
    expect(validateCreate({ uploadId: 'u', key: 'k', bucket: 'b' })).toEqual({ uploadId: 'u', key: 'k' });
    expect(() => validateCreate({ uploadId: 'u' })).toThrow(/must return an object with string `uploadId` and `key`/);
    expect(() => validateCreate({ key: 'k' })).toThrow(/`uploadId` and `key`/);
    expect(() => validateCreate({ uploadId: '', key: 'k' })).toThrow(/non-empty/);
    expect(() => validateCreate(null)).toThrow(/`uploadId` and `key`/);
  });
});

describe('validateBatch and validateParts', () => {
  test('every requested part needs a url', () => {
    const urls = validateBatch({ presignedUrls: { '1': 'https://a', '2': 'https://b' } }, [1, 2]);
    expect([...urls]).toEqual([
      [1, 'https://a'],
      [2, 'https://b'],
    ]);
    expect(() => validateBatch({ presignedUrls: { '1': 'https://a' } }, [1, 2])).toThrow(
      /^Signing part 2 must return a `url`/,
    );
    expect(() => validateBatch({}, [1])).toThrow(/Signing part 1 must return a `url`/);
  });

  test('listed parts need numbers and ETags', () => {
    expect(validateParts([{ PartNumber: 1, Size: 5, ETag: '"e"' }])).toEqual([{ PartNumber: 1, Size: 5, ETag: '"e"' }]);
    expect(() => validateParts({})).toThrow(/must return an array/);
    expect(() => validateParts([{ PartNumber: '1', ETag: 'e' }])).toThrow(/numeric `PartNumber`/);
  });
});

test('S3 XML answers are read for Location, Bucket, Key, ETag and Message', () => {
  const ok =
    '<PostResponse><Location>http://s3/b/a%20b</Location><Bucket>b</Bucket><Key>a &amp; b</Key><ETag>"abc"</ETag></PostResponse>';
  expect(readS3Xml(ok)).toEqual({ Location: 'http://s3/b/a%20b', Bucket: 'b', Key: 'a & b', ETag: '"abc"' });
  const error = '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>';
  expect(readS3Xml(error)).toEqual({ Code: 'AccessDenied', Message: 'Request has expired' });
  expect(readS3Xml('')).toEqual({});
});
