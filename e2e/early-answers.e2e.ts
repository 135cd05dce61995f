/**
 * Answers `ferry` gives before reading a request's body reach real Node clients: tus-js-client's
 * deferred-length upload over `--max-size` gets "413 upload is larger than the maximum size"
 * (not "write EPIPE"), and node:http clients streaming 8 MiB to `PUT /upload/raw` and
 * `POST /upload` get their 413 and message. 20 tries each; every one must arrive.
 */
import { request } from 'node:http';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type RunningFerry, startFerry } from './support/ferry.ts';

const MiB = 1024 * 1024;
const TRIES = 20;
const body = Buffer.alloc(8 * MiB, 'x');
let ferry: RunningFerry;

beforeAll(async () => {
  ferry = await startFerry(['--no-ui', '--max-size', String(MiB)]);
});

afterAll(async () => {
  await ferry?.stop();
});

/** What a try ended with: `413 <message>` when the answer arrived, else the client's error. */
async function tries(one: () => Promise<string>): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < TRIES; i += 1) outcomes.push(await one().catch((err: Error) => err.message));
  return outcomes;
}

/** tus-js-client with a deferred length: the PATCH carrying `Upload-Length` is refused early. */
function tusTry(): Promise<string> {
  return new Promise((ok) => {
    const upload = new tus.Upload(body, {
      endpoint: `${ferry.url}/files/`,
      uploadLengthDeferred: true,
      retryDelays: [],
      onSuccess: () => ok('uploaded'),
      onError: (err) => {
        const res = (err as tus.DetailedError).originalResponse;
        ok(res ? `${res.getStatus()} ${res.getBody().trim()}` : err.message);
      },
    });
    upload.start();
  });
}

/** The `message` of a JSON error body, else the body itself. */
function messageOf(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text;
  }
}

/** A node:http request streaming `payload`, read as tus-js-client reads it. */
function httpTry(path: string, method: string, headers: Record<string, string>, payload: Buffer): Promise<string> {
  return new Promise((ok, fail) => {
    const req = request(`${ferry.url}${path}`, {
      method,
      headers: { ...headers, 'Content-Length': String(payload.length) },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        ok(`${res.statusCode} ${messageOf(text)}`);
      });
    });
    req.on('error', fail);
    req.end(payload);
  });
}

test('tus-js-client gets 413 for a deferred-length upload over --max-size, 20 of 20', async () => {
  const outcomes = await tries(tusTry);
  expect(outcomes).toEqual(Array(TRIES).fill('413 upload is larger than the maximum size'));
});

test('PUT /upload/raw streaming 8 MiB gets its 413 and message, 20 of 20', async () => {
  const outcomes = await tries(() =>
    httpTry('/upload/raw?name=big.bin', 'PUT', { 'Content-Type': 'application/octet-stream' }, body),
  );
  expect(outcomes).toEqual(Array(TRIES).fill(`413 File exceeds the maximum size of ${MiB} bytes`));
});

test('POST /upload streaming an 8 MiB file part gets its 413 and message, 20 of 20', async () => {
  const head = Buffer.from(
    '--b0undary\r\nContent-Disposition: form-data; name="files[]"; filename="big.bin"\r\n' +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const form = Buffer.concat([head, body, Buffer.from('\r\n--b0undary--\r\n')]);
  const outcomes = await tries(() =>
    httpTry('/upload', 'POST', { 'Content-Type': 'multipart/form-data; boundary=b0undary' }, form),
  );
  expect(outcomes).toEqual(Array(TRIES).fill(`413 File exceeds the maximum size of ${MiB} bytes`));
});
