// Builds @ferry/react for npm, into dist/:
// - index.js (+ .d.ts, source map): the library; React, react-dom and @ferry/core stay imports;
// - styles.css: the stylesheet, imported by apps as `@ferry/react/styles.css`;
// - ferry.js (+ .d.ts, source map): the standalone drop-in, one minified file holding React,
//   @ferry/core and the stylesheet (imported as text, `?inline` as Vite does).
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { defineConfig, type UserConfig } from 'tsdown';

const INLINE = '?inline';

/** `import css from './x.css?inline'`: the file's text as the default export. */
const cssInline = {
  name: 'ferry-css-inline',
  resolveId(source: string, importer: string | undefined) {
    if (!source.endsWith(INLINE) || !importer) return null;
    return resolve(dirname(importer), source);
  },
  async load(id: string) {
    if (!id.endsWith(INLINE)) return null;
    const css = await readFile(id.slice(0, -INLINE.length), 'utf8');
    return { code: `export default ${JSON.stringify(css)};`, moduleType: 'js' as const };
  },
};

const common: UserConfig = {
  format: 'esm',
  target: 'es2022',
  sourcemap: true,
  plugins: [cssInline],
};

export default defineConfig([
  {
    ...common,
    entry: { index: 'src/index.ts' },
    platform: 'neutral',
    dts: true,
    clean: true,
    copy: [{ from: 'src/styles.css', to: 'dist' }],
  },
  {
    // The standalone's types only; they import @ferry/core's and React's like the library's do.
    ...common,
    entry: { ferry: 'src/standalone.tsx' },
    platform: 'neutral',
    dts: { emitDtsOnly: true },
    clean: false,
  },
  {
    ...common,
    entry: { ferry: 'src/standalone.tsx' },
    platform: 'browser',
    dts: false,
    clean: false,
    minify: true,
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    deps: { alwaysBundle: [/.*/], onlyBundle: false },
    // @ferry/core from its sources (as in development), so this build needs no core build first.
    inputOptions: { resolve: { conditionNames: ['ferry-source', 'browser', 'import', 'default'] } },
  },
]);
