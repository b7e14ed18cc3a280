import { defineConfig } from 'vitest/config'

// `pnpm test:runtimes`: the examples under Bun, Deno and workerd, started as child processes.
export default defineConfig({
  test: {
    root: new URL('.', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
