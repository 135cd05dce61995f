// Builds the two pages the core benchmark times: Ferry's demo page (its Dashboard on @ferry/core)
// and the Uppy peer, with the same Vite. BENCH_PAGE=ferry|uppy.
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

const here = import.meta.dirname;
const page = process.env.BENCH_PAGE ?? 'ferry';

export default defineConfig({
  root: page === 'ferry' ? resolve(here, '../../apps/demo') : resolve(here, 'uppy'),
  plugins: [react()],
  logLevel: 'warn',
  resolve: { dedupe: ['react', 'react-dom'], conditions: ['ferry-source', ...defaultClientConditions] },
  build: { outDir: resolve(here, '../results/core', page), emptyOutDir: true },
});
