/** The Lambda runtime's Node major; the local stack and the dashboard CLI run the same code on it. */
export const REQUIRED_NODE_MAJOR = 22;

/**
 * The sentence to print when `version` (process.versions.node) is older than the Lambda runtime's Node, naming
 * the tool and the fix; undefined when it is new enough.
 */
export function oldNodeProblem(tool: string, version: string): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return undefined;
  return `${tool} needs Node ${REQUIRED_NODE_MAJOR} or newer (the Lambda runtime's version); this is Node ${version}: run nvm use (or fnm use; .nvmrc names the version), or install Node ${REQUIRED_NODE_MAJOR} from https://nodejs.org.`;
}
