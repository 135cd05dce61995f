// Builds the S3 benchmark page (bench/s3/page) with the repository's Vite: @ferry/core from the
// workspace, Uppy from bench/s3/node_modules.
import { resolve } from 'node:path';
import { defaultClientConditions, defineConfig } from 'vite';

const here = import.meta.dirname;

export default defineConfig({
  root: resolve(here, 'page'),
  logLevel: 'warn',
  resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
  build: { outDir: resolve(here, '../results/s3/page'), emptyOutDir: true },
});
