import { defineConfig } from 'vitest/config';

// End-to-end specs: each starts a real `ferry` and, where needed, a real Chromium.
export default defineConfig({
  test: {
    include: ['**/*.e2e.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two cores: one spec file at a time keeps timings far from the limits.
    fileParallelism: false,
  },
});
