import { processIo } from './io';
import { runSdapi } from './main';

// `sdapi` entry point (see bin.mjs): the exit code tells scripts what happened; see EXIT in errors.ts.
process.exitCode = await runSdapi(process.argv.slice(2), processIo());
