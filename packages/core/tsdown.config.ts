// Builds @ferry/core for npm: ES modules (the engine and one per locale pack) with their .d.ts and
// source maps in dist/.
import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    ...Object.fromEntries(
      ['en', 'de', 'fr', 'es', 'pt-BR', 'ja', 'zh-CN', 'ar'].map((code) => [
        `locales/${code}`,
        `src/locales/${code}.ts`,
      ]),
    ),
  },
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  dts: true,
  sourcemap: true,
  clean: true,
});
