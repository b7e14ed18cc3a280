// The sender of the flows an instance runs, as asked by its polls: refused flows are not sent
// again under that name while the polls carry it; nothing it meets makes it throw or reject.
import { createRequire } from 'node:module'
import { expect, it } from 'vitest'

const require = createRequire(import.meta.url)
type Answer = { status: number; body?: { message?: string } }
const { createFlowsSender } = require('../lib/fleet-flows.js') as {
  createFlowsSender(deps: {
    flows(): Promise<unknown[] | null>
    send(body: string): Promise<Answer>
    log(line: string): void
  }): { asked(name: string | null): Promise<void> }
}

function senderAnswering(answers: Answer[]) {
  const sent: string[] = []
  const lines: string[] = []
  const sender = createFlowsSender({
    flows: async () => [{ id: 't1', type: 'tab' }],
    send: async (body) => {
      sent.push((JSON.parse(body) as { name: string }).name)
      return answers.shift() ?? { status: 201 }
    },
    log: (line) => lines.push(line),
  })
  return { sender, sent, lines }
}

it.each([400, 404, 409, 413])(
  'does not send a name again after a %i, until a poll asks for none',
  async (status) => {
    const { sender, sent } = senderAnswering([{ status, body: { message: 'no' } }])
    await sender.asked('line-1')
    await sender.asked('line-1')
    await sender.asked('line-1')
    expect(sent).toEqual(['line-1'])
    // Another name is another ask.
    await sender.asked('line-2')
    expect(sent).toEqual(['line-1', 'line-2'])
    await sender.asked(null)
    await sender.asked('line-1')
    expect(sent).toEqual(['line-1', 'line-2', 'line-1'])
  },
)

it.each([0, 408, 429, 500, 503])('sends again at the next poll after a %i', async (status) => {
  const { sender, sent } = senderAnswering([{ status }])
  await sender.asked('line-1')
  await sender.asked('line-1')
  expect(sent).toEqual(['line-1', 'line-1'])
})

it('never rejects: flows that cannot be read, a send that throws, each a line of the log', async () => {
  const lines: string[] = []
  const sender = createFlowsSender({
    flows: () => {
      throw new Error('no flows\nat somewhere')
    },
    send: () => Promise.reject(new Error('unreachable')),
    log: (line) => lines.push(line),
  })
  await expect(sender.asked('line-1')).resolves.toBeUndefined()
  const failing = createFlowsSender({
    flows: async () => [],
    send: () => Promise.reject(new Error('connection reset')),
    log: (line) => lines.push(line),
  })
  await expect(failing.asked('line-1')).resolves.toBeUndefined()
  expect(lines).toEqual([
    'fleet: the flows asked for as line-1 were not sent (no flows)',
    'fleet: the flows asked for as line-1 were not sent (connection reset)',
  ])
})
