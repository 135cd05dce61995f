import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Unit and component tests beside the code; the end-to-end suite has its own config in e2e/.
// The workspace packages resolve to their sources (the `ferry-source` export condition).
export default defineConfig({
  resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
  ssr: { resolve: { conditions: ['ferry-source', ...defaultServerConditions] } },
  test: {
    include: ['packages/*/src/**/*.test.{ts,tsx}'],
  },
});
