/**
 * How to run npm with `args` from a script: with the npm that runs this script when there is one (`npm_execpath`,
 * a JavaScript file run by this Node), so no shell or `.cmd` shim is involved on Windows; otherwise `npm` from PATH,
 * through a shell on Windows, where npm is a `.cmd` file that Node does not start without one.
 */
export function npmCommand(args: readonly string[], env: NodeJS.ProcessEnv = process.env): { command: string; args: string[]; shell: boolean } {
  const npmCli = env.npm_execpath;
  if (npmCli && /\.c?js$/.test(npmCli)) return { command: process.execPath, args: [npmCli, ...args], shell: false };
  return { command: 'npm', args: [...args], shell: process.platform === 'win32' };
}
