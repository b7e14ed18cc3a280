// Shared by the settings tests: a settings object parsed as the file settings.json of a server
// whose userDir defaults to /srv/flows, and the message one is refused with.
import { expect } from 'vitest'
import { parseSettings, SettingsError } from '../src/index.js'

/** `input` parsed as settings.json, with /srv/flows as the default userDir. */
export const parse = (input: unknown) => parseSettings(input, 'settings.json', '/srv/flows')

/** The message a settings object is refused with; fails when the settings are accepted. */
export function refusal(input: unknown): string {
  try {
    parse(input)
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError)
    return (error as Error).message
  }
  throw new Error('the settings were accepted')
}
