// What the fuzzer sends to POST /audit/events, as an instance (or someone posing as one): HTTP
// Basic credentials right, wrong or odd, and reports mostly well-formed, often hostile (times
// from 1970 to past 2100, names with slashes and controls, secret-looking details, extra keys,
// too many events, nesting deep enough to hurt).
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { type FuzzBody, oddText, sometimes } from './fuzz-bodies.js'
import type { Part } from './fuzz-wire.js'

/** The resource server the target knows, and its machine secret (the settings hold its digest). */
export const FUZZ_FLEET = { id: 'fleet', secret: 'a-machine-secret-the-fuzzer-knows-32b' }
export const FUZZ_FLEET_DIGEST = `sha256:${createHash('sha256').update(FUZZ_FLEET.secret).digest('hex')}`

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

type Header = [string, Part[]]

/** The Authorization of a report: mostly the fleet's, sometimes wrong, missing or not Basic at all. */
export const reporterAuth: fc.Arbitrary<Header[]> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.constant<Header[]>([['Authorization', [basic(FUZZ_FLEET.id, FUZZ_FLEET.secret)]]]),
  },
  { weight: 2, arbitrary: fc.constant<Header[]>([]) },
  fc
    .constantFrom(
      basic(FUZZ_FLEET.id, 'wrong'),
      basic('other', FUZZ_FLEET.secret),
      basic('', FUZZ_FLEET.secret),
      basic(`${FUZZ_FLEET.id}:x`, FUZZ_FLEET.secret),
      `basic ${Buffer.from(`${FUZZ_FLEET.id}:${FUZZ_FLEET.secret}`).toString('base64')}`,
      'Basic !!!',
      'Basic',
      `Bearer ${FUZZ_FLEET.secret}`,
    )
    .map((value): Header[] => [['Authorization', [value]]]),
  oddText.map((text): Header[] => [['Authorization', [`Basic ${text.replace(/[\r\n]/g, '')}`]]]),
)

/** A value of a field: mostly right, sometimes of another type or odd. */
const value = (right: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 12, arbitrary: right },
    fc.constantFrom(null, true, 1.5, -1, '', [], {}, '1e999', 2 ** 53),
    oddText,
  )

const time = value(
  fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 0, 1) }) },
    fc.constantFrom(0, Date.UTC(2100, 0, 1), 8.64e15, 8.64e15 + 1, -1, Date.now() + 3_600_000),
  ),
)
const name = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('line-1', 'line-2', 'flowadmin') },
  fc.constantFrom('a/b', '', 'x'.repeat(129), 'tab\there', '=1+1', 'a;=HYPERLINK("x")', '__proto__'),
  oddText,
)
const details: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.dictionary(
      fc.oneof(oddText, fc.constantFrom('password', 'token', 'n')),
      fc.jsonValue({ maxDepth: 3 }),
      { maxKeys: 4 },
    ),
  },
  fc
    .integer({ min: 10, max: 3_000 })
    .map((depth) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)),
  fc.constantFrom([], 'text', null, JSON.parse('{"__proto__":{"polluted":true}}')),
)

/** One reported event, mostly well-formed: its fields in a record, with twists. */
const reportedEvent: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    time,
    instance: value(name),
    actor: value(fc.oneof(fc.constant(null), name)),
    event: value(
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constantFrom('flows.set', 'auth.login.fail.credentials', 'nodes.install'),
        },
        oddText,
      ),
    ),
    address: value(fc.oneof(fc.constant(null), fc.constantFrom('10.0.0.7', '::1'), oddText)),
    details: sometimes(details, 2),
    extra: sometimes(fc.constantFrom('server', 'source', 'reporter', 'received', '__proto__'), 12),
  })
  .map(({ details: given, extra, ...fields }) => ({
    ...fields,
    ...(given === null ? {} : { details: given }),
    ...(extra === null ? {} : { [extra]: 'flowadmin' }),
  }))

/** `POST /audit/events`: `{"events": [...]}`, usually; sometimes too many, too large, or no report at all. */
export const reportBody: fc.Arbitrary<FuzzBody> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .array(reportedEvent, { minLength: 0, maxLength: 6 })
      .map((events) => ({ format: 'json' as const, parts: [JSON.stringify({ events })] })),
  },
  fc.tuple(reportedEvent, fc.constantFrom(500, 501)).map(([event, n]) => ({
    format: 'json' as const,
    parts: [JSON.stringify({ events: Array(n).fill(event) })],
  })),
  fc.integer({ min: 1_000_000, max: 1_100_000 }).map((n) => ({
    format: 'json' as const,
    parts: [
      `{"events":[{"time":0,"instance":"a","actor":null,"event":"x","address":null,"details":{"t":"${'x'.repeat(n)}"}}]}`,
    ],
  })),
  fc
    .constantFrom('{"events":{}}', '{"events":null}', '[]', '{}', 'not json', '{"events":[1,2]}')
    .map((text) => ({
      format: 'json' as const,
      parts: [text],
    })),
)
