// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { FerryProvider } from '../context.tsx';
import { Camera } from '../panels/Camera.tsx';
import { ManualUploader } from '../test/manual-uploader.ts';
import { FileCard } from './FileCard.tsx';

afterEach(cleanup);

test('the file card saves the meta fields it edits', () => {
  const ferry = new Ferry({ uploader: new ManualUploader() });
  const id = ferry.addFile({ data: new File(['x'], 'draft.txt') }) as string;
  let closed = 0;
  render(
    <FerryProvider ferry={ferry}>
      <FileCard
        id={id}
        metaFields={[
          { id: 'name', name: 'Name' },
          { id: 'caption', name: 'Caption', placeholder: 'What is it?' },
        ]}
        onDone={() => (closed += 1)}
      />
    </FerryProvider>,
  );
  expect((screen.getByLabelText('Name') as HTMLInputElement).value).toBe('draft.txt');
  fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'final.txt' } });
  fireEvent.change(screen.getByLabelText('Caption'), { target: { value: 'the final one' } });
  act(() => {
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
  });
  expect(ferry.getFile(id)?.meta).toMatchObject({ name: 'final.txt', caption: 'the final one' });
  expect(closed).toBe(1);
});

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
