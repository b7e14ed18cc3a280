import { defineConfig } from 'vitest/config'

// The store contract over node:sqlite, run by vitest under Deno:
// `deno run -A node_modules/vitest/vitest.mjs run --config packages/adapter-sqlite-builtin/vitest.deno.config.ts`
export default defineConfig({
  test: {
    root: new URL('.', import.meta.url).pathname,
    include: ['test/node-sqlite-contract.spec.ts'],
  },
})
