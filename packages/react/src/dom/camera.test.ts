import { expect, test } from 'vitest';
import { constraints, recorderType, recordingName, snapshotName } from './camera.ts';
import { extensionFor, wouldExceed } from './record.ts';

test.each([
  ['video/webm;codecs=vp9,opus', 'webm'],
  ['audio/webm', 'webm'],
  ['video/ogg', 'ogv'],
  ['audio/ogg; codecs=opus', 'ogg'],
  ['video/x-matroska;codecs=avc1', 'mkv'],
  ['video/mp4', 'mp4'],
  ['audio/mpeg', 'mp3'],
  ['video/quicktime', null],
  ['', null],
])('extensionFor(%j) = %j', (type, ext) => {
  expect(extensionFor(type)).toBe(ext);
});

test('constraints per mode face the user', () => {
  expect(constraints('video-audio')).toEqual({ video: { facingMode: 'user' }, audio: true });
  expect(constraints('video-only')).toEqual({ video: { facingMode: 'user' }, audio: false });
  expect(constraints('audio-only')).toEqual({ video: false, audio: true });
  expect(constraints('picture')).toEqual({ video: { facingMode: 'user' }, audio: false });
});

test('names and the size guard', () => {
  expect(snapshotName(1700000000000)).toBe('cam-1700000000000.jpg');
  expect(recordingName(1700000000000, 'webm')).toBe('webcam-1700000000000.webm');
  expect(wouldExceed(900, 100, 1000)).toBe(false);
  expect(wouldExceed(901, 100, 1000)).toBe(true);
  expect(wouldExceed(10 ** 9, 10 ** 9, null)).toBe(false);
  expect(recorderType('audio-only', (t) => t === 'audio/ogg')).toBe('audio/ogg');
  expect(recorderType('video-only', () => false)).toBe('');
});
