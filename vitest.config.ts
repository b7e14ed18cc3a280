import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources in tests, so a change is seen
  // without a rebuild (tests run in Vite's server environment, hence `ssr`). End-to-end tests
  // run the built CLI instead.
  resolve: { conditions: ['@flowadmin/source'] },
  ssr: { resolve: { conditions: ['@flowadmin/source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
