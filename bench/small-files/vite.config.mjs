// Builds one page for the benchmark: BENCH_PAGE=ferry (the demo page of this checkout, as
// `npm run build` makes it) or uppy (the peer page), into bench/results/small-files/<page>.
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

const here = import.meta.dirname;
const page = process.env.BENCH_PAGE ?? 'ferry';

export default defineConfig({
  root: page === 'ferry' ? resolve(here, '../../apps/demo') : resolve(here, 'uppy'),
  plugins: page === 'ferry' ? [react()] : [],
  logLevel: 'warn',
  resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
  build: {
    outDir: resolve(here, '../results/small-files', page),
    emptyOutDir: true,
    // BENCH_MINIFY=0 keeps function names readable in a profile (PROFILE=1 in measure.mjs).
    minify: process.env.BENCH_MINIFY !== '0',
  },
});
