// What the fuzzer sends to fleet mode's routes: the instances' own (`/fleet/instances/{id}/desired`,
// `/report`, `/lease`, with HTTP Basic as the resource server, right, wrong or odd) and the people's
// (`GET /fleet/instances`, `DELETE /fleet/instances/{id}`, with a bearer token or none), at ids
// mostly known, sometimes hostile, with odd `If-None-Match` and `Prefer` headers and reports mostly
// well-formed, often not. Each request is sent as raw bytes; the route it reaches is told here too.
import fc from 'fast-check'
import { oddText, sometimes } from './fuzz-bodies.js'
import type { Route, SeenRequest } from './fuzz-oracle.js'
import { FUZZ_FLEET } from './fuzz-reports.js'

/** The ids the fuzzer's instances mostly use. */
export const FLEET_IDS = ['edge-1', 'edge-2', 'edge-3'] as const

export type Bearer = 'admin' | 'viewer' | 'none' | 'odd'

export interface FleetRequest {
  aim: 'poll' | 'report' | 'lease' | 'list' | 'forget'
  method: string
  /** The id's path segment, as sent (escapes kept). */
  segment: string
  headers: Array<[string, string]>
  /** Whose bearer token the people's routes carry. */
  bearer: Bearer
  body: string
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const noBreaks = (text: string) => text.replace(/[\r\n]/g, '')

/** An id's path segment: mostly a known one, sometimes hostile. */
const segment: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...FLEET_IDS) },
  fc.constantFrom(
    '',
    '..',
    '%2e%2e',
    'a%2Fb',
    'a%2fb',
    '%00',
    'x'.repeat(129),
    'x'.repeat(128),
    '__proto__',
    'constructor',
    'edge-1%20',
    '%E2%80%AE',
    '%ff',
    'edge-1;x',
    'edge-1?x=1',
    'edge-1#x',
    'EDGE-1',
  ),
  oddText.map((text) => encodeURIComponent(text)),
)

/** The instance's Authorization: mostly the resource server's, sometimes wrong, missing or odd. */
const instanceAuth: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.constant<Array<[string, string]>>([
      ['Authorization', basic(FUZZ_FLEET.id, FUZZ_FLEET.secret)],
    ]),
  },
  fc.constant<Array<[string, string]>>([]),
  fc
    .constantFrom(
      basic(FUZZ_FLEET.id, 'wrong'),
      basic('other', FUZZ_FLEET.secret),
      basic(`${FUZZ_FLEET.id}/edge-1`, FUZZ_FLEET.secret),
      'Basic !!!',
      'Basic',
      `Bearer ${FUZZ_FLEET.secret}`,
    )
    .map((value): Array<[string, string]> => [['Authorization', value]]),
  fc.constant<Array<[string, string]>>([
    ['Authorization', basic(FUZZ_FLEET.id, FUZZ_FLEET.secret)],
    ['Authorization', basic(FUZZ_FLEET.id, 'wrong')],
  ]),
  oddText.map((text): Array<[string, string]> => [['Authorization', `Basic ${noBreaks(text)}`]]),
)

/** A poll's `If-None-Match` and `Prefer`: a hold is asked only with a version that never matches. */
const pollHeaders: fc.Arbitrary<Array<[string, string]>> = fc
  .tuple(
    sometimes(
      fc.oneof(fc.constantFrom('"999999"', '"x"', '*', 'W/"1"', '""', '"1", "2"'), oddText.map(noBreaks)),
      2,
    ),
    sometimes(
      fc.oneof(
        fc.constantFrom(
          'wait=0',
          'wait=1',
          'wait=-1',
          'wait=1e9',
          'wait=99999999',
          'wait',
          'respond-async, wait=1',
        ),
        oddText.map(noBreaks),
      ),
      2,
    ),
  )
  .map(([match, prefer]) => [
    ...(match === null ? [] : ([['If-None-Match', match]] as Array<[string, string]>)),
    // A matching version is never sent, so a hold ends at once or after at most a second.
    ...(prefer === null ? [] : ([['Prefer', prefer]] as Array<[string, string]>)),
  ])

const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('node-red-contrib-a', '@acme/b', 'node-red-node-c') },
  fc.constantFrom('', 'x'.repeat(300), 'a\u0000b', '__proto__', '../x'),
  oddText,
)
const value = <T>(right: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 10, arbitrary: right as fc.Arbitrary<unknown> },
    fc.constantFrom(null, 1.5, -1, '', [], {}, true),
    oddText,
  )

/** A report: mostly well-formed, with twists. */
const report = fc
  .record({
    sequence: sometimes(value(fc.integer({ min: 0, max: 2 ** 40 })), 4),
    nodeRedVersion: value(fc.constantFrom('4.1.15', '4.0.0')),
    modules: value(
      fc.array(
        fc.record({
          name,
          version: value(fc.constantFrom('1.0.0', '2.0.0-beta.1')),
          sets: value(
            fc.array(
              fc.record({
                name: value(fc.constantFrom('a', 'b')),
                types: value(fc.array(value(fc.constantFrom('a-type', 'b-type')), { maxLength: 3 })),
                enabled: value(fc.boolean()),
                loaded: value(fc.boolean()),
              }),
              { maxLength: 2 },
            ),
          ),
        }),
        { maxLength: 3 },
      ),
    ),
    typesInUse: value(fc.array(value(fc.constantFrom('a-type', 'inject')), { maxLength: 3 })),
    applied: value(fc.oneof(fc.constant(null), fc.constantFrom('1', '2'))),
    failures: value(fc.constant([])),
    changes: sometimes(
      value(
        fc.array(
          fc.record({
            module: name,
            action: value(fc.constantFrom('enable', 'disable', 'install', 'remove', 'upgrade', 'explode')),
            by: value(fc.oneof(fc.constant(null), fc.constantFrom('alice', 'a\nb'))),
            at: value(fc.integer({ min: 0, max: 2 ** 45 })),
          }),
          { maxLength: 3 },
        ),
      ),
      3,
    ),
    extra: sometimes(fc.constantFrom('__proto__', 'constructor', 'instance', 'resourceServer'), 10),
  })
  .map(({ sequence, changes, extra, ...fields }) => ({
    ...fields,
    ...(sequence === null ? {} : { sequence }),
    ...(changes === null ? {} : { changes }),
    ...(extra === null ? {} : { [extra]: 'edge-9' }),
  }))

const reportBody = fc.oneof(
  { weight: 10, arbitrary: report.map((body) => JSON.stringify(body)) },
  fc.constantFrom('', '{}', '[]', 'null', 'not json', '{"modules":', '{"__proto__":{"polluted":true}}'),
  fc.integer({ min: 70_000, max: 1_100_000 }).map((n) => `{"nodeRedVersion":"${'x'.repeat(n)}"}`),
)

const method = (usual: string) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(usual) },
    fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
  )

const bearer = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Bearer>('admin') },
  fc.constantFrom<Bearer>('viewer', 'none', 'odd'),
)

export const fleetRequest: fc.Arbitrary<FleetRequest> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(method('GET'), segment, instanceAuth, pollHeaders).map(([m, s, auth, headers]) => ({
      aim: 'poll' as const,
      method: m,
      segment: s,
      headers: [...auth, ...headers],
      bearer: 'none' as const,
      body: '',
    })),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        method('POST'),
        segment,
        instanceAuth,
        reportBody,
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', ''),
      )
      .map(([m, s, auth, body, type]) => ({
        aim: 'report' as const,
        method: m,
        segment: s,
        headers: [...auth, ...(type === '' ? [] : ([['Content-Type', type]] as Array<[string, string]>))],
        bearer: 'none' as const,
        body,
      })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(method('DELETE'), segment, instanceAuth).map(([m, s, auth]) => ({
      aim: 'lease' as const,
      method: m,
      segment: s,
      headers: auth,
      bearer: 'none' as const,
      body: '',
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(method('GET'), bearer)
      .map(([m, b]) => ({ aim: 'list' as const, method: m, segment: '', headers: [], bearer: b, body: '' })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(method('DELETE'), segment, bearer).map(([m, s, b]) => ({
      aim: 'forget' as const,
      method: m,
      segment: s,
      headers: [],
      bearer: b,
      body: '',
    })),
  },
)

/** The request-target of a request. */
export function targetOf(request: FleetRequest): string {
  const base = '/fleet/instances'
  switch (request.aim) {
    case 'poll':
      return `${base}/${request.segment}/desired`
    case 'report':
      return `${base}/${request.segment}/report`
    case 'lease':
      return `${base}/${request.segment}/lease`
    case 'list':
      return base
    case 'forget':
      return `${base}/${request.segment}`
  }
}

/** The bytes of a request (Connection: close; the length of its body) and how the server sees it. */
export function wireOf(
  request: FleetRequest,
  tokens: Record<Bearer, string>,
): { bytes: Buffer; seen: SeenRequest } {
  const body = Buffer.from(request.body, 'utf8')
  const headers: Array<[string, string]> = [
    ['Host', '127.0.0.1'],
    ...request.headers,
    ...(request.aim === 'list' || request.aim === 'forget'
      ? request.bearer === 'none'
        ? []
        : ([['Authorization', `Bearer ${tokens[request.bearer]}`]] as Array<[string, string]>)
      : []),
    ...(body.length > 0 ? ([['Content-Length', String(body.length)]] as Array<[string, string]>) : []),
    ['Connection', 'close'],
  ]
  const target = targetOf(request)
  const head = `${request.method} ${target} HTTP/1.1\r\n${headers.map(([key, val]) => `${key}: ${val}\r\n`).join('')}\r\n`
  return {
    bytes: Buffer.concat([Buffer.from(head, 'latin1'), body]),
    seen: { method: request.method, target, headers, body, broken: false },
  }
}

/**
 * The route a request reaches (as the server parses its target: dot segments removed, the query
 * and a fragment cut off) and the instance id its path names, if any.
 */
export function fleetRouteOf(request: FleetRequest): { route: Route; id: string | null } {
  let path: string
  try {
    path = new URL(`http://host${targetOf(request)}`).pathname
  } catch {
    return { route: { kind: 'none' }, id: null }
  }
  const [empty, fleet, instances, segment, sub, ...rest] = path.split('/')
  if (empty !== '' || fleet !== 'fleet' || instances !== 'instances' || rest.length > 0)
    return { route: { kind: 'none' }, id: null }
  let id: string | null = null
  try {
    id = segment === undefined ? null : decodeURIComponent(segment)
  } catch {
    id = segment ?? null
  }
  const read = request.method === 'GET' || request.method === 'HEAD'
  const reached =
    segment === undefined
      ? read
      : sub === undefined
        ? request.method === 'DELETE'
        : (sub === 'desired' && read) ||
          (sub === 'report' && request.method === 'POST') ||
          (sub === 'lease' && request.method === 'DELETE')
  if (!reached) return { route: { kind: 'none' }, id }
  return { route: { kind: sub === undefined ? 'fleet-people' : 'fleet-instance' }, id }
}

/** What a request reached: an instance's poll, report or leave, the people's list or removal. */
export function aimOf(request: FleetRequest): 'poll' | 'report' | 'lease' | 'list' | 'forget' | 'none' {
  const { route } = fleetRouteOf(request)
  if (route.kind === 'none') return 'none'
  const path = new URL(`http://host${targetOf(request)}`).pathname.split('/')
  if (path.length === 3) return 'list'
  if (path.length === 4) return 'forget'
  return path[4] === 'desired' ? 'poll' : path[4] === 'report' ? 'report' : 'lease'
}
