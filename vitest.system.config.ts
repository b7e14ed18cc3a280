import { defineConfig } from 'vitest/config'

// `pnpm test:system`: the tests that need a program of the system besides Node.js and PostgreSQL
// (Prometheus: apt-get install prometheus). Not part of `pnpm test`, which needs none; CI's .ci/run
// installs them and runs both. The browser tests, which need Chromium, are `pnpm test:browser`.
export default defineConfig({
  resolve: { conditions: ['@flowadmin/source'] },
  ssr: { resolve: { conditions: ['@flowadmin/source'] } },
  test: {
    include: ['packages/*/test/**/*.system.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
