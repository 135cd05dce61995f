// @vitest-environment jsdom
import { Ferry } from '@ferry/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, expect, test } from 'vitest';
import { ManualUploader } from '../../../core/src/test/manual-uploader.ts';
import { FerryProvider } from '../context.tsx';
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
