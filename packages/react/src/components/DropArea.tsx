/** Where files come in: drop them here or pick them with the file input. */
import { type DragEvent, useId, useState } from 'react';
import { useFerry } from '../context.tsx';

export function DropArea() {
  const ferry = useFerry();
  const inputId = useId();
  const [over, setOver] = useState(false);

  const add = (list: FileList | null) => {
    if (list && list.length > 0) ferry.addFiles(Array.from(list, (data) => ({ data })));
  };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    add(event.dataTransfer.files);
  };

  return (
    <section
      className="ferry-drop"
      aria-label="Drop files here"
      data-over={over || undefined}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <p>Drop files here or</p>
      <label htmlFor={inputId} className="ferry-button">
        browse files
      </label>
      <input
        id={inputId}
        className="ferry-visually-hidden"
        type="file"
        multiple
        onChange={(e) => {
          add(e.currentTarget.files);
          e.currentTarget.value = '';
        }}
      />
    </section>
  );
}
