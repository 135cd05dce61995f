// Builds the S3 benchmark page (bench/s3/page) with the repository's Vite: @ferry/core from the
// workspace, Uppy from bench/s3/node_modules, and `@ferry/core-at`: the sources of another
// commit's @ferry/core when BENCH_CORE_AT_SRC names its index.ts (run.sh's BENCH_FERRY_AT), else
// the workspace's again.
import { resolve } from 'node:path';
import { defaultClientConditions, defineConfig } from 'vite';

const here = import.meta.dirname;

export default defineConfig({
  root: resolve(here, 'page'),
  logLevel: 'warn',
  resolve: {
    conditions: ['ferry-source', ...defaultClientConditions],
    alias: { '@ferry/core-at': process.env.BENCH_CORE_AT_SRC ?? '@ferry/core' },
  },
  build: { outDir: resolve(here, '../results/s3/page'), emptyOutDir: true },
});
