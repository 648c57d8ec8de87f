/** A `.luau` file imported by a Lambda entry: its text, bundled by esbuild's text loader (SERVICE_BUNDLING). */
declare module '*.luau' {
  const text: string;
  export default text;
}
