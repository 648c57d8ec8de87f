/**
 * The layer rules `npm run lint` enforces (docs/architecture.md); `npm run lint:layers` runs them alone and
 * test/unit/layers.test.ts proves each one fails on a violation.
 * @type {import('dependency-cruiser').IConfiguration}
 */

/** The AWS SDK, Lambda types, middy, Powertools and the CDK, resolved (node_modules/...) or not (the bare name). */
const AWS_PACKAGES =
  '(^|node_modules/)(@aws-sdk|@smithy|@aws-crypto|@middy|@aws-lambda-powertools|@types/aws-lambda|aws-lambda|aws-cdk|aws-cdk-lib|cdk-nag|constructs)(/|$)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle makes a module load half-initialised and ties the modules together: move the shared types to a leaf.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-plain',
      severity: 'error',
      comment: 'lambdas/domain holds the rules as plain functions: no table, HTTP, Lambda wiring or AWS/middy/powertools/CDK package.',
      from: { path: '^lambdas/domain/' },
      to: { path: ['^lambdas/(adapters|http|functions|runtime)/', AWS_PACKAGES] },
    },
    {
      name: 'lambdas-are-deployable',
      severity: 'error',
      comment:
        'lambdas/ is what Lambda bundles: it imports no admin CLI (dashboard/), publisher CLI (sdapi/), local stack (local/), console pages (console/), scripts or bench.',
      from: { path: '^lambdas/' },
      to: { path: '^(dashboard|sdapi|local|console|scripts|bench)/' },
    },
    {
      name: 'adapters-below-http',
      severity: 'error',
      comment: 'An adapter talks to AWS for the rules; it imports no HTTP contract, Lambda entry or runtime wiring (those import it).',
      from: { path: '^lambdas/adapters/' },
      to: { path: '^lambdas/(http|functions|runtime)/' },
    },
    {
      name: 'entries-stand-alone',
      severity: 'error',
      comment: 'Each file of lambdas/functions/ is one deployed function: another function entry is never imported (share through http/ or runtime/).',
      from: { path: '^lambdas/functions/([^/]+)\\.ts$' },
      to: { path: '^lambdas/functions/', pathNot: '^lambdas/functions/$1\\.ts$' },
    },
    {
      name: 'no-test-code-outside-tests',
      severity: 'error',
      comment: 'Only the tests and the bench may import test/ (its helpers, fakes and fixtures).',
      from: { pathNot: '^(test|bench)/' },
      to: { path: '^test/' },
    },
    {
      name: 'scripts-are-entry-points',
      severity: 'error',
      comment:
        'scripts/ are npm run entry points (and the files one of them is split into): only tests import them; shared code lives in the modules they run.',
      from: { pathNot: '^(scripts|test)/' },
      to: { path: '^scripts/' },
    },
    {
      name: 'resolvable',
      severity: 'error',
      comment: 'An import the cruiser cannot resolve escapes every rule above (a new alias, a typo): make it resolve.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(cdk\\.out|\\.local|\\.cache|console/dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.mjs', '.js', '.cjs', '.json', '.d.ts'],
    },
  },
};
