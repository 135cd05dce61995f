import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  // The workspace packages from their sources (the `ferry-source` export condition), not dist/.
  resolve: { conditions: ['ferry-source', ...defaultClientConditions] },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: { proxy: { '/files': 'http://127.0.0.1:3020' } },
});
