/**
 * Ferry as a user outside this repository gets it: `npm pack` of @ferry/core and @ferry/react
 * (building through `prepack`), the tarballs installed into a fresh Vite + React app in a
 * temporary directory, that app built and uploading through its Dashboard to a real `ferry`;
 * both packages imported under plain Node; the standalone `ferry.js` on a page without a bundler;
 * and a copy of the `ferry` binary serving its embedded page from an empty directory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Browser, launchBrowser } from './support/browser.ts';
import { stopFerryFirmly } from './support/core-page.ts';
import { ferryBin, type RunningFerry, repoRoot, sha256, startFerry, storedTusUploads } from './support/ferry.ts';

const run = promisify(execFile);

/** Gzipped size the standalone file must stay under (React itself is about 60 kB of it). */
const STANDALONE_GZIP_BUDGET = 160 * 1024;

let work: string;
let app: string;
let browser: Browser;
const running: RunningFerry[] = [];

/** The exact version the workspace uses, so the outside app builds with the same tools. */
async function workspaceVersion(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8'));
  return (manifest as { version: string }).version;
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024, env: process.env });
  return stdout;
}

async function serve(args: string[], options = {}): Promise<RunningFerry> {
  const ferry = await startFerry(args, options);
  running.push(ferry);
  return ferry;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ferry-packages-'));
  const packs = join(work, 'packs');
  await mkdir(packs);
  await npm(
    ['pack', '--workspace', 'packages/core', '--workspace', 'packages/react', '--pack-destination', packs],
    repoRoot,
  );
  const tarballs = await readdir(packs);
  const tarball = (name: string) => {
    const file = tarballs.find((t) => t.startsWith(`ferry-${name}-`) && t.endsWith('.tgz'));
    if (!file) throw new Error(`npm pack made no @ferry/${name} tarball: ${tarballs.join(', ')}`);
    return `file:${join(packs, file)}`;
  };

  app = join(work, 'app');
  await mkdir(join(app, 'src'), { recursive: true });
  const manifest = {
    name: 'ferry-outside-app',
    private: true,
    type: 'module',
    dependencies: {
      '@ferry/core': tarball('core'),
      '@ferry/react': tarball('react'),
      react: await workspaceVersion('react'),
      'react-dom': await workspaceVersion('react-dom'),
    },
    devDependencies: {
      '@vitejs/plugin-react': await workspaceVersion('@vitejs/plugin-react'),
      vite: await workspaceVersion('vite'),
    },
  };
  await writeFile(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  await writeFile(
    join(app, 'vite.config.js'),
    "import react from '@vitejs/plugin-react';\nexport default { plugins: [react()] };\n",
  );
  await writeFile(
    join(app, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>outside app</title></head>' +
      '<body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body></html>\n',
  );
  await writeFile(
    join(app, 'src', 'main.jsx'),
    [
      "import { Ferry, TusUploader } from '@ferry/core';",
      "import { Dashboard, FerryProvider } from '@ferry/react';",
      "import '@ferry/react/styles.css';",
      "import { createRoot } from 'react-dom/client';",
      "const ferry = new Ferry({ uploader: new TusUploader({ endpoint: '/files/' }) });",
      "createRoot(document.getElementById('root')).render(",
      '  <FerryProvider ferry={ferry}><Dashboard /></FerryProvider>,',
      ');',
      '',
    ].join('\n'),
  );
  await npm(['install', '--no-audit', '--no-fund', '--loglevel', 'error'], app);
  await run(join(app, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'error'], { cwd: app });
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  for (const ferry of running) await stopFerryFirmly(ferry);
  if (work) await rm(work, { recursive: true, force: true });
});

/** Picks one file on `url`'s Dashboard, uploads it, and checks the stored bytes. */
async function uploadThroughDashboard(ferry: RunningFerry, url: string, name: string): Promise<void> {
  const bytes = randomBytes(2 * 1024 * 1024 + 17);
  const file = join(work, name);
  await writeFile(file, bytes);
  const page = await browser.context.newPage();
  try {
    await page.goto(url);
    await page.locator('input[type=file]:not([webkitdirectory])').setInputFiles(file);
    await page.getByRole('button', { name: /^Upload 1 file$/ }).click();
    await expect.poll(() => page.getByTestId('ferry-status').textContent(), { timeout: 60_000 }).toBe('Complete');
  } finally {
    await page.close();
  }
  const stored = await storedTusUploads(ferry.dataDir);
  const match = stored.find((s) => s.filename === name);
  expect(match, `stored upload for ${name}`).toBeDefined();
  expect(match?.size).toBe(bytes.length);
  expect(match?.sha256).toBe(sha256(bytes));
}

test('the packages import under plain Node (no window or document at import time)', async () => {
  for (const specifier of ['@ferry/core', '@ferry/react', '@ferry/react/standalone']) {
    const { stdout } = await run(
      process.execPath,
      ['-e', `import(${JSON.stringify(specifier)}).then((m) => console.log(Object.keys(m).length))`],
      { cwd: app },
    );
    expect(Number(stdout.trim()), specifier).toBeGreaterThan(0);
  }
  // What the tarballs hold: built JavaScript, types and maps, no sources.
  const reactDist = await readdir(join(app, 'node_modules', '@ferry', 'react', 'dist'));
  expect(reactDist.sort()).toEqual(
    ['ferry.d.ts', 'ferry.js', 'ferry.js.map', 'index.d.ts', 'index.js', 'index.js.map', 'styles.css'].sort(),
  );
  const coreDist = await readdir(join(app, 'node_modules', '@ferry', 'core', 'dist'));
  // The engine, the locale packs, and type chunks the bundler shares between them.
  expect(coreDist.filter((name) => !/^[\w-]+\.d\.ts$/.test(name) || name === 'index.d.ts').sort()).toEqual(
    ['index.d.ts', 'index.js', 'index.js.map', 'locales'].sort(),
  );
  const packs = await readdir(join(app, 'node_modules', '@ferry', 'core', 'dist', 'locales'));
  for (const code of ['en', 'de', 'fr', 'es', 'pt-BR', 'ja', 'zh-CN', 'ar']) {
    expect(packs, code).toContain(`${code}.js`);
    expect(packs, code).toContain(`${code}.d.ts`);
  }
  expect(packs.some((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))).toBe(false);
});

test('a Vite + React app built from the tarballs uploads through its Dashboard', async () => {
  const dist = join(app, 'dist');
  const assets = await readdir(join(dist, 'assets'));
  const css = assets.find((a) => a.endsWith('.css'));
  expect(css, 'the app bundles @ferry/react/styles.css').toBeDefined();
  expect(await readFile(join(dist, 'assets', css ?? ''), 'utf8')).toContain('.ferry-dashboard');
  const ferry = await serve(['--ui-dir', dist]);
  await uploadThroughDashboard(ferry, `${ferry.url}/`, 'outside-app.bin');
});

test('the standalone ferry.js mounts the Dashboard on a page without a bundler', async () => {
  const standalone = await readFile(join(app, 'node_modules', '@ferry', 'react', 'dist', 'ferry.js'));
  const gzip = gzipSync(standalone, { level: 9 }).length;
  console.log(`standalone @ferry/react/standalone (dist/ferry.js): ${standalone.length} bytes, ${gzip} bytes gzip`);
  expect(gzip).toBeLessThan(STANDALONE_GZIP_BUDGET);

  const site = join(work, 'plain-site');
  await mkdir(site);
  await writeFile(join(site, 'ferry.js'), standalone);
  await writeFile(
    join(site, 'index.html'),
    [
      '<!doctype html><meta charset="utf-8"><title>plain page</title>',
      '<div id="uploader"></div>',
      '<script type="module">',
      "  import { mount } from './ferry.js';",
      "  mount('#uploader', { endpoint: '/files/', theme: 'auto' });",
      '</script>',
      '',
    ].join('\n'),
  );
  const ferry = await serve(['--ui-dir', site]);
  await uploadThroughDashboard(ferry, `${ferry.url}/index.html`, 'standalone.bin');
});

test('a copied ferry binary serves its embedded page from an empty directory', async () => {
  const dir = join(work, 'copied');
  await mkdir(dir);
  const bin = join(dir, 'ferry');
  await copyFile(ferryBin, bin);
  const ferry = await serve([], { bin, cwd: dir });
  const index = await (await fetch(`${ferry.url}/`)).text();
  expect(index).toContain('<div id="root">');
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(index)?.[1];
  expect(script, 'index.html names its script').toBeDefined();
  const res = await fetch(`${ferry.url}${script}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/javascript');
  const built = await readFile(join(repoRoot, 'apps', 'demo', 'dist', (script ?? '').slice(1)));
  expect(Buffer.from(await res.arrayBuffer()).equals(built)).toBe(true);
  await uploadThroughDashboard(ferry, `${ferry.url}/`, 'copied-binary.bin');
});
