// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
import { Camera } from './Camera.tsx';

afterEach(cleanup);

test('without a camera API the camera panel says so', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  render(
    <FerryProvider ferry={ferry}>
      <Camera />
    </FerryProvider>,
  );
  expect(screen.getByRole('alert').textContent).toBe('Webcam access not supported');
});

test('until the camera answers, the panel asks for permission', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  const original = Object.getOwnPropertyDescriptor(navigator, 'mediaDevices');
  Object.defineProperty(navigator, 'mediaDevices', {
    configurable: true,
    value: { getUserMedia: () => new Promise(() => {}) },
  });
  try {
    render(
      <FerryProvider ferry={ferry}>
        <Camera />
      </FerryProvider>,
    );
    expect(screen.getByRole('heading').textContent).toBe('Please allow access to your camera');
    expect((screen.getByRole('button', { name: 'Begin video recording' }) as HTMLButtonElement).disabled).toBe(true);
  } finally {
    if (original) Object.defineProperty(navigator, 'mediaDevices', original);
    else Reflect.deleteProperty(navigator, 'mediaDevices');
  }
});

test('both buttons when the modes allow both; the select offers recording modes; none for a picture from audio', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  const original = Object.getOwnPropertyDescriptor(navigator, 'mediaDevices');
  Object.defineProperty(navigator, 'mediaDevices', {
    configurable: true,
    value: { getUserMedia: () => new Promise(() => {}) },
  });
  try {
    const { rerender } = render(
      <FerryProvider ferry={ferry}>
        <Camera />
      </FerryProvider>,
    );
    expect(screen.getByRole('button', { name: 'Take a picture' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Begin video recording' })).toBeTruthy();
    const options = screen.getAllByRole('option').map((o) => (o as HTMLOptionElement).value);
    expect(options).toEqual(['video-audio', 'video-only', 'audio-only']);

    rerender(
      <FerryProvider ferry={ferry}>
        <Camera key="audio" modes={['audio-only', 'picture']} />
      </FerryProvider>,
    );
    expect(screen.queryByRole('button', { name: 'Take a picture' })).toBeNull();
    expect(screen.queryByRole('combobox')).toBeNull();

    rerender(
      <FerryProvider ferry={ferry}>
        <Camera key="picture" modes={['picture']} />
      </FerryProvider>,
    );
    expect(screen.getByRole('button', { name: 'Take a picture' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Begin video recording' })).toBeNull();
  } finally {
    if (original) Object.defineProperty(navigator, 'mediaDevices', original);
    else Reflect.deleteProperty(navigator, 'mediaDevices');
  }
});
