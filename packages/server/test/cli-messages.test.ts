// Start-up errors of the built `flowadmin` command that say how to fix themselves: a misspelt
// setting, a JSON mistake at its line and column, a port already in use.
import { writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { runCli, runCliToEnd, useUserDir } from './cli-process.js'

const dir = useUserDir('cli-messages')

/** `flowadmin start --settings settings.json` in the userDir, to its end. */
async function startWith(source: string, ...args: string[]) {
  await writeFile(dir.settingsFile, source)
  return runCliToEnd(['start', '--settings', 'settings.json', ...args], { cwd: dir.userDir })
}

describe('flowadmin start, with a mistake in the settings', () => {
  it('suggests the known setting nearest to a misspelt one', async () => {
    expect(await startWith('{"uiPrt": 1880, "httpServer": {"keepAliveTimout": 5000}}')).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: settings.json: httpServer.keepAliveTimout: unknown setting; did you mean httpServer.keepAliveTimeout?\n' +
        'flowadmin: settings.json: uiPrt: unknown setting; did you mean uiPort?\n',
    })
  })

  it('suggests nothing for a setting that is nothing like a known one', async () => {
    expect((await startWith('{"colour": "blue"}')).stderr).toBe(
      'flowadmin: settings.json: colour: unknown setting\n',
    )
  })

  it('reports a JSON mistake at its line and column, without repeating the file', async () => {
    const source =
      '{\n  "uiPort": 1880,\n  "postgres": {"url": "postgres://a:s3cret@db/x"},\n  "userDir": \n}\n'
    const failed = await startWith(source)
    expect(failed).toEqual({
      code: 2,
      stdout: '',
      stderr: "flowadmin: settings.json:5:1: not valid JSON: expected a value, found '}'\n",
    })
  })

  it('names a trailing comma where it is', async () => {
    expect((await startWith('{\n  "uiPort": 1880,\n}\n')).stderr).toBe(
      "flowadmin: settings.json:3:1: not valid JSON: expected a property name in double quotes, found '}' (a comma too many before it?)\n",
    )
  })
})

describe('flowadmin start, on a port in use', () => {
  it('says how to pick another port', async () => {
    await writeFile(dir.settingsFile, '{"storage": "memory"}')
    const { url } = await dir.start()
    const port = new URL(url).port
    const run = runCli(['start', '--settings', dir.settingsFile, '--port', port])
    expect(await run.exited).toBe(1)
    expect(run.stderr).toBe(
      `flowadmin: cannot listen on 127.0.0.1:${port}: the port is already in use\n` +
        `flowadmin: port ${port} is taken: pick another with --port N, or "uiPort" in the settings\n`,
    )
  })
})
