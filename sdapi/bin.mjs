#!/usr/bin/env node
// The package's `sdapi` command. The CLI is TypeScript run through tsx (a dev dependency), as every
// script of this repository is, so it works straight after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
