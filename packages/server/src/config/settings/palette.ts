// `externalModules.palette`: whether and which node modules may be installed and removed.
import * as v from 'valibot'
import { ruleProblem, urlProblem } from '../../adapters/palette-rules.js'
import { issueOf, onOff, strictObject, whole } from './fields.js'

/** `externalModules.palette`, with its defaults applied. */
export interface PaletteSettings {
  allowInstall: boolean
  allowUpload: boolean
  allowList: string[]
  denyList: string[]
  allowScripts: boolean
  /** null: npm's own configuration (userDir/.npmrc, ~/.npmrc, the public registry). */
  registry: string | null
  /** Seconds npm may run for one install or removal. */
  timeout: number
  /** Seconds a request waits for the install or removal before it, then 409 busy. */
  wait: number
}

export const DEFAULT_PALETTE: PaletteSettings = {
  allowInstall: true,
  allowUpload: false,
  allowList: ['*'],
  denyList: [],
  allowScripts: false,
  registry: null,
  timeout: 300,
  wait: 30,
}

const paletteRules = v.array(
  v.pipe(v.string('must be a string'), issueOf(ruleProblem)),
  'must be a list of module names or patterns such as "node-red-contrib-*" or "some-module@<2"',
)

export const externalModules = strictObject({
  palette: v.optional(
    strictObject({
      allowInstall: v.optional(onOff),
      allowUpload: v.optional(onOff),
      allowList: v.optional(paletteRules),
      denyList: v.optional(paletteRules),
      allowScripts: v.optional(onOff),
      registry: v.optional(
        v.pipe(
          v.string('must be a string'),
          issueOf((url) => (urlProblem(url) === null ? null : 'must be an http or https URL')),
        ),
      ),
      timeout: v.optional(whole(1, 3_600)),
      wait: v.optional(whole(0, 600)),
    }),
  ),
})
