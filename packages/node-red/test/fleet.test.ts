import { createRequire } from 'node:module'
import { describe, expect, test } from 'vitest'
import { flowadmin } from './load.js'

// The helper's own parts, loaded as Node-RED loads the helper.
const require = createRequire(import.meta.url)
const { modulesOf, typesOf } = require('../lib/local-admin.js') as {
  modulesOf(list: unknown): Array<{ name: string; version: string; sets: unknown[] }>
  typesOf(flows: unknown): string[]
}

const good = { url: 'https://flowadmin.example:1880', clientId: 'fleet', clientSecret: 'secret' }

function refusal(options: object): string {
  try {
    flowadmin.httpAdminMiddleware(options as never)
  } catch (error) {
    return (error as Error).message
  }
  return 'accepted'
}

describe('fleet mode options', () => {
  test('fleet is true or false, and instanceId a short id of letters, digits, ".", "_" and "-"', () => {
    expect(refusal({ ...good, fleet: 'yes' })).toBe(
      '@flowadmin/node-red: fleet must be true or false, got "yes"',
    )
    expect(refusal({ ...good, instanceId: '../etc' })).toContain('instanceId must be 1 to 128 letters')
    expect(refusal({ ...good, instanceId: 'x'.repeat(129) })).toContain('instanceId must be 1 to 128 letters')
    expect(refusal({ ...good, instanceId: 'line-3.press_1' })).toBe('accepted')
  })

  test('an instance in fleet mode still answers its hooks; a token is not the agent’s by being long or empty', async () => {
    const adminAuth = flowadmin.adminAuth({
      ...good,
      url: 'http://127.0.0.1:9',
      fleet: true,
      timeoutMs: 200,
      log: () => {},
    })
    expect(Object.keys(adminAuth).sort()).toEqual(['authenticate', 'tokens', 'type', 'users'])
    await expect(adminAuth.tokens('')).resolves.toBeNull()
    await expect(adminAuth.tokens('a'.repeat(43))).resolves.toBeNull()
  })
})

describe('what an instance reports', () => {
  test('its modules from GET /nodes: Node-RED’s own left out, sets grouped by module, an error’s first line', () => {
    const list = [
      {
        id: 'node-red/inject',
        name: 'inject',
        types: ['inject'],
        enabled: true,
        module: 'node-red',
        version: '4.1.2',
      },
      {
        id: '@acme/tools/upper',
        name: 'upper',
        types: ['upper-case'],
        enabled: true,
        module: '@acme/tools',
        version: '0.3.1',
      },
      {
        id: '@acme/tools/lower',
        name: 'lower',
        types: ['lower-case'],
        enabled: false,
        module: '@acme/tools',
        version: '0.3.1',
      },
      {
        id: 'broken/x',
        name: 'x',
        types: [],
        enabled: true,
        module: 'broken',
        version: '1.0.0',
        err: 'SyntaxError: x\n  at y',
      },
      'junk',
    ]
    expect(modulesOf(list)).toEqual([
      {
        name: '@acme/tools',
        version: '0.3.1',
        sets: [
          { name: 'upper', types: ['upper-case'], enabled: true, loaded: true },
          { name: 'lower', types: ['lower-case'], enabled: false, loaded: false },
        ],
      },
      {
        name: 'broken',
        version: '1.0.0',
        sets: [{ name: 'x', types: [], enabled: true, loaded: false, err: 'SyntaxError: x' }],
      },
    ])
    expect(modulesOf(null)).toEqual([])
  })

  test('the types its flows use, from either flows format, sorted and once each', () => {
    const nodes = [
      { type: 'tab' },
      { type: 'inject' },
      { type: 'inject' },
      { type: 'debug' },
      { id: 'no type' },
    ]
    expect(typesOf(nodes)).toEqual(['debug', 'inject', 'tab'])
    expect(typesOf({ rev: 'x', flows: nodes })).toEqual(['debug', 'inject', 'tab'])
    expect(typesOf('nonsense')).toEqual([])
  })
})

describe("a report's text", () => {
  const { cleanText } = require('../lib/fleet.js') as { cleanText(key: string, value: unknown): unknown }
  const cleaned = (value: unknown) => JSON.parse(JSON.stringify(value, cleanText))

  test('loses colour codes and control characters, and keeps everything else, as flowadmin takes it', () => {
    const npm = '\u001b[31mnpm error\u001b[39m code E404\t404 Not Found - GET https://registry/x\r'
    const report = {
      nodeRedVersion: '4.1.15',
      failures: [{ module: 'x', message: npm }],
      sets: 3,
      lone: 'a\ud800b',
    }
    const out = cleaned(report)
    expect(out).toEqual({
      nodeRedVersion: '4.1.15',
      failures: [{ module: 'x', message: 'npm error code E404 404 Not Found - GET https://registry/x ' }],
      sets: 3,
      lone: 'a\ufffdb',
    })
    // What flowadmin's report schema refuses: control characters and lone surrogates.
    expect(JSON.stringify(out)).not.toMatch(/[\p{Cc}\p{Cs}]/u)
    expect(cleaned({ emoji: 'ok 🙂', text: 'Ünïcode' })).toEqual({ emoji: 'ok 🙂', text: 'Ünïcode' })
  })
})
