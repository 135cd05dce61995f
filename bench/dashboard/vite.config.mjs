// Builds one page for the benchmark, the same way for Ferry's demo and the Uppy peer.
// BENCH_PAGE=ferry|uppy, BENCH_REACT=bundled|external (external: React left out of the bundle).
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

const here = import.meta.dirname;
const page = process.env.BENCH_PAGE ?? 'ferry';
const external = process.env.BENCH_REACT === 'external';
const root = page === 'ferry' ? resolve(here, '../../apps/demo') : resolve(here, 'uppy');

export default defineConfig({
  root,
  plugins: [react()],
  logLevel: 'warn',
  resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
  build: {
    outDir: resolve(here, '../results/dashboard', `${page}-${external ? 'no-react' : 'full'}`),
    emptyOutDir: true,
    // BENCH_MINIFY=0 keeps function names readable in a profile (PROFILE=1 in paint.mjs).
    minify: process.env.BENCH_MINIFY !== '0',
    rollupOptions: external ? { external: [/^react($|\/)/, /^react-dom($|\/)/, /^scheduler/] } : {},
  },
});
