import { defineConfig } from 'vitest/config'

// `pnpm test:browser`: the console in Debian's Chromium against the built server. Not part of
// `pnpm test`, which needs no browser.
export default defineConfig({
  test: {
    include: ['packages/console/test/browser/**/*.browser.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
})
