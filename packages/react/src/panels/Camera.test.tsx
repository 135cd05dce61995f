// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { FerryProvider } from '../context.tsx';
import { ManualUploader } from '../test/manual-uploader.ts';
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
