/**
 * The framework-free drop-in, `@ferry/react/standalone`: built to one ES module (`dist/ferry.js`)
 * holding React, `@ferry/core`, the Dashboard and its stylesheet, so a page without a bundler
 * mounts the Dashboard with one `import` and one call. The engine's classes are re-exported for
 * pages that build their own uploader.
 */
import { Ferry, type FerryOptions, TusUploader } from '@ferry/core';
import { createRoot } from 'react-dom/client';
import { Dashboard, type DashboardProps } from './components/Dashboard.tsx';
import { FerryProvider } from './context.tsx';
import styles from './styles.css?inline';

export * from '@ferry/core';

/** Options of {@link mount}: the Dashboard's props plus where and how files go. */
export interface MountOptions extends DashboardProps {
  /** The tus endpoint local files go to when `ferry` names no uploader (default `/files/`). */
  endpoint?: string;
  /** An engine to show, or the options of a new one (its `uploader` defaults to tus at `endpoint`). */
  ferry?: Ferry | FerryOptions;
  /** Add the Dashboard's stylesheet to the document (default true); false when the page links it. */
  styles?: boolean;
}

/** A mounted Dashboard: its engine, and a way to take it off the page. */
export interface MountedDashboard {
  ferry: Ferry;
  unmount(): void;
}

/** The id of the `<style>` element {@link mount} adds once per document. */
const STYLE_ID = 'ferry-styles';

/**
 * Renders the Dashboard into `target` (an element or a CSS selector). Nothing touches the
 * document before this is called, so importing the module is safe anywhere.
 */
export function mount(target: Element | string, options: MountOptions = {}): MountedDashboard {
  const { endpoint = '/files/', ferry: engine, styles: addStyles = true, ...dashboard } = options;
  const element = typeof target === 'string' ? document.querySelector(target) : target;
  if (!element) throw new Error(`ferry: no element matches ${String(target)}`);
  const ferry = engine instanceof Ferry ? engine : new Ferry({ uploader: new TusUploader({ endpoint }), ...engine });
  if (addStyles && !document.getElementById(STYLE_ID)) {
    const style = document.createElement('style');
    style.id = STYLE_ID;
    style.textContent = styles;
    document.head.append(style);
  }
  const root = createRoot(element);
  root.render(
    <FerryProvider ferry={ferry}>
      <Dashboard {...dashboard} />
    </FerryProvider>,
  );
  return { ferry, unmount: () => root.unmount() };
}
