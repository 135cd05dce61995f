import { defineConfig } from 'vitest/config';

// Unit and component tests beside the code; the end-to-end suite has its own config in e2e/.
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.{ts,tsx}'],
  },
});
