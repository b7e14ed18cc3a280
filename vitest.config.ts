import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // Workspace packages resolve to their TypeScript sources in tests, so a change
    // is seen without a rebuild. End-to-end tests run the built CLI instead.
    conditions: ['@flowadmin/source'],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
