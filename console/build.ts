import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { isMainModule } from '#local/main-module';

const SOURCE_DIR = fileURLToPath(new URL('./src/', import.meta.url));
export const DEFAULT_OUT_DIR = fileURLToPath(new URL('./dist/', import.meta.url));

/** The files a build writes, by name in outDir; the same names every build, so a rebuild replaces them. */
export const CONSOLE_FILES = { page: 'index.html', script: 'app.js', styles: 'app.css', icon: 'favicon.svg' } as const;

/**
 * Builds the console into outDir: index.html, one bundled script and one stylesheet (no inline script or style, so
 * the Content-Security-Policy can forbid both), and the icon. esbuild only, no network. The page names its assets
 * with a content hash in the query, so a browser never runs a new page with an old script.
 */
export async function buildConsole(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(SOURCE_DIR, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    platform: 'browser',
    tsconfig: join(SOURCE_DIR, '..', 'tsconfig.json'),
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: outDir,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const written = new Map<string, Uint8Array>();
  for (const file of result.outputFiles) written.set(file.path.slice(file.path.lastIndexOf('/') + 1), file.contents);
  const script = written.get(CONSOLE_FILES.script);
  const styles = written.get(CONSOLE_FILES.styles);
  if (!script || !styles) throw new Error(`console build wrote ${[...written.keys()].join(', ')}, not ${CONSOLE_FILES.script} and ${CONSOLE_FILES.styles}`);
  const template = await readFile(join(SOURCE_DIR, 'index.html'), 'utf8');
  const page = template
    .replace('{{script}}', `${CONSOLE_FILES.script}?v=${contentHash(script)}`)
    .replace('{{styles}}', `${CONSOLE_FILES.styles}?v=${contentHash(styles)}`);
  await Promise.all([
    writeFile(join(outDir, CONSOLE_FILES.script), script),
    writeFile(join(outDir, CONSOLE_FILES.styles), styles),
    writeFile(join(outDir, CONSOLE_FILES.page), page),
    writeFile(join(outDir, CONSOLE_FILES.icon), await readFile(join(SOURCE_DIR, CONSOLE_FILES.icon))),
  ]);
}

function contentHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}

// `npm run console:build`: into console/dist/ (or the folder named on the command line).
if (isMainModule(import.meta.url)) {
  const outDir = process.argv[2] ?? DEFAULT_OUT_DIR;
  buildConsole(outDir).then(
    () => process.stdout.write(`Console built into ${outDir}\n`),
    (error: unknown) => {
      process.stderr.write(`console build failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
