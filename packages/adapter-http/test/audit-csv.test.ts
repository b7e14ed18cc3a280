// The CSV export opened as a spreadsheet would open it, splitting on `,` and on `;` (the list
// separator of German, French, … locales): no cell starts a formula, whatever the events hold.
import { describe, expect, test } from 'vitest'
import { createWorld as createWorldAt, fleetBasic } from './helpers.js'

const T0 = Date.UTC(2026, 10, 27, 6, 0, 0)

/**
 * Splits CSV text into rows of cells as a spreadsheet does (RFC 4180 for a file written with this
 * separator): a cell that starts with `"` is quoted up to a lone `"` (`""` is one quote), and what
 * follows the closing quote up to the separator is kept as it is; a quote inside a cell that did
 * not start with one is text. `strict`: a quote after a closing quote, or text between a closing
 * quote and the separator, is an error, as RFC 4180 has it.
 */
function parseCsv(text: string, separator: string, strict: boolean): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let at = 0
  const endCell = () => {
    row.push(cell)
    cell = ''
  }
  while (at < text.length) {
    if (text[at] === '"') {
      // A quoted section, to its lone closing quote.
      at++
      for (;;) {
        if (at >= text.length) throw new Error('a quoted cell is not closed')
        if (text[at] === '"' && text[at + 1] === '"') {
          cell += '"'
          at += 2
        } else if (text[at] === '"') {
          at++
          break
        } else cell += text[at++]
      }
      if (strict && at < text.length && text[at] !== separator && text[at] !== '\r')
        throw new Error(`text after a closing quote at ${at}: ${JSON.stringify(text.slice(at, at + 20))}`)
    }
    // The rest of the cell, to the separator or the end of the line.
    while (at < text.length && text[at] !== separator && text[at] !== '\r' && text[at] !== '\n') {
      if (strict && text[at] === '"') throw new Error(`a quote inside an unquoted cell at ${at}`)
      cell += text[at++]
    }
    endCell()
    if (text[at] === separator) {
      at++
      continue
    }
    if (text[at] === '\r' && text[at + 1] === '\n') at++
    at++
    rows.push(row)
    row = []
  }
  return rows
}

const FORMULA_START = /^[=+\-@]/

/** Cells that a spreadsheet would run, with or without the spaces it may trim first. */
const formulas = (rows: string[][]) =>
  rows.flat().filter((cell) => FORMULA_START.test(cell) || FORMULA_START.test(cell.trimStart()))

/** Text an attacker types where a trail keeps it: a username, an instance's name, details. */
const HOSTILE = [
  '=1+1',
  '+1',
  '-1',
  '@SUM(A1)',
  '\t=1',
  ' =1',
  'a;=HYPERLINK("https://evil.example","x")',
  'a;+1',
  'a; -1',
  'a;"=1',
  'a;" @1',
  'a;;@1',
  'a,=1',
  'a\t=1',
  'a\r\n=1',
  'a\n+1',
  'a\r-1',
  '"=1"',
]

describe('the CSV export', () => {
  test('has no cell that starts a formula, split on `,` or on `;`', async () => {
    const world = await createWorldAt()
    world.clock.set(T0 + 60_000)
    // An instance's report: every field it may fill, hostile.
    const events = HOSTILE.flatMap((text, i) => [
      {
        time: T0 + i,
        instance: `line-${i}`,
        actor: text.replace(/[\r\n\t]/g, ' '),
        event: '-flows.set',
        address: text.replace(/[\r\n\t]/g, ' '),
        details: { note: text, list: [1, -2, '=3'], [text]: ['a;-1'] },
      },
      {
        time: T0 + i,
        instance: text.replace(/[\r\n\t/]/g, ' '),
        actor: null,
        event: '-x',
        address: null,
        details: {},
      },
    ])
    const res = await world.request('/audit/events', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: fleetBasic() },
      body: JSON.stringify({ events }),
    })
    expect(res.status).toBe(200)
    // flowadmin's own events: a username typed at the sign-in page may hold line breaks and tabs.
    for (const text of HOSTILE) {
      await world.stores.trail.append([
        {
          time: T0,
          received: T0,
          reporter: null,
          server: null,
          instance: null,
          actor: text,
          event: 'login.failed',
          outcome: 'failure',
          address: '203.0.113.7',
          addressReported: false,
          details: { username: text },
        },
      ])
    }

    const token = await world.login()
    const csv = await world.request('/audit', {
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/csv' },
    })
    expect(csv.status).toBe(200)
    const text = await csv.text()

    // Split on `,`, as written: valid RFC 4180, one row per event, nothing a spreadsheet runs.
    const rows = parseCsv(text, ',', true)
    const header = rows[0] as string[]
    expect(rows).toHaveLength(1 + events.length + HOSTILE.length)
    for (const row of rows) expect(row).toHaveLength(header.length)
    expect(formulas(rows)).toEqual([])
    // What was defused is still there to read, behind its quote.
    const actors = rows.slice(1).map((row) => row[header.indexOf('actor')])
    expect(actors).toContain("'=1+1")
    expect(actors).toContain("a\r\n'=1")
    expect(actors).toContain('a;\'=HYPERLINK("https://evil.example","x")')
    const details = rows.slice(1).map((row) => JSON.parse(row[header.indexOf('details')] as string))
    expect(details).toContainEqual({ note: "a;'+1", list: [1, -2, '=3'], "a;'+1": ["a;'-1"] })

    // Split on `;`, as a spreadsheet in a `;` locale opens it: nothing it runs either.
    expect(formulas(parseCsv(text, ';', false))).toEqual([])
    // And on tabs, as some import it.
    expect(formulas(parseCsv(text, '\t', false))).toEqual([])
  })
})
