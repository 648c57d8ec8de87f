import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { SERVICE_BUNDLING } from '#lib/constructs/service-function';

/** A Lambda function bundled as the stack bundles it (ServiceFunction), or as one of the cold-start bench's variants. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT_DIR = `${ROOT}.cache/bench/bundles/`;

/** ServiceFunction's bundling (SERVICE_BUNDLING) as the esbuild options CDK's NodejsFunction passes for it. */
export const SERVICE_FUNCTION_ESBUILD = {
  bundle: true,
  platform: 'node',
  format: SERVICE_BUNDLING.format === OutputFormat.ESM ? 'esm' : 'cjs',
  minify: SERVICE_BUNDLING.minify,
  sourcemap: SERVICE_BUNDLING.sourceMap,
  target: SERVICE_BUNDLING.target,
  external: SERVICE_BUNDLING.externalModules,
  loader: SERVICE_BUNDLING.loader,
  banner: { js: SERVICE_BUNDLING.banner },
} satisfies BuildOptions;

/** A build: its name (the bundle's folder) and what it sets beside SERVICE_FUNCTION_ESBUILD. */
export interface BuildVariant {
  name: string;
  esbuild: Partial<BuildOptions>;
  /** The tree whose `lambdas/` holds the entries (ending in `/`): this one unless another checkout is measured. */
  root?: string;
}

/** The build the stack deploys. */
export const SERVICE_BUILD: BuildVariant = { name: 'service', esbuild: {} };

export interface BundleReport {
  file: string;
  bytes: number;
  sourceMapBytes: number;
  /** Bytes of the bundle by origin: a package name, or `lambdas` for the service's own code. */
  bundledBytesByOrigin: Record<string, number>;
  /** What the bundle imports at run time instead of carrying it (the Lambda runtime provides @aws-sdk). */
  external: string[];
}

/** Bundle the function at `entry` (relative to `lambdas/`) under .cache/bench/bundles/, and say what the bundle holds. */
export async function bundleFunction(entry: string, variant: BuildVariant = SERVICE_BUILD): Promise<BundleReport> {
  const file = `${OUT_DIR}${variant.name}/${entry.replace(/\.ts$/, '')}/index.mjs`;
  const result = await build({
    ...SERVICE_FUNCTION_ESBUILD,
    ...variant.esbuild,
    entryPoints: [`${variant.root ?? ROOT}lambdas/${entry}`],
    outfile: file,
    metafile: true,
    logLevel: 'silent',
  });
  return {
    file,
    bytes: (await stat(file)).size,
    sourceMapBytes: (await stat(`${file}.map`)).size,
    ...bundleContents(result.metafile ?? { inputs: {}, outputs: {} }),
  };
}

function bundleContents(metafile: Metafile): Pick<BundleReport, 'bundledBytesByOrigin' | 'external'> {
  const byOrigin: Record<string, number> = {};
  const external = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const origin = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? (/(^|\/)lambdas\//.test(input) ? 'lambdas' : input);
      byOrigin[origin] = (byOrigin[origin] ?? 0) + bytesInOutput;
    }
    for (const { path, external: isExternal } of output.imports) if (isExternal) external.add(path);
  }
  const sorted = Object.entries(byOrigin).sort(([, a], [, b]) => b - a);
  return { bundledBytesByOrigin: Object.fromEntries(sorted), external: [...external].sort() };
}
