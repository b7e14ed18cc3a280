// The esbuild options both bundles of the `flowadmin` command share: the one `pnpm build` makes
// for this checkout (bundle-cli.mjs) and the one the installable package carries (package.mjs).
/** @type {import('esbuild').BuildOptions} */
export const COMMAND_BUILD = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  // Without comments and blank space the source V8 keeps in memory is half as large; names stay,
  // so stack traces still read. (A single character beyond ASCII, in a comment, would also have
  // V8 keep the whole source at two bytes a character.)
  minifyWhitespace: true,
  charset: 'ascii',
  logLevel: 'warning',
}
