// Preloaded into the server by tests (NODE_OPTIONS=--require): appends the hash of every argon2
// verification, once it has completed, to the file named by FLOWADMIN_VERIFY_LOG. Tests count
// verifications this way instead of timing requests. A hash is no secret: the settings hold it.
const { appendFileSync } = require('node:fs')
const { createRequire } = require('node:module')
const path = require('node:path')

const argon2 = createRequire(path.join(__dirname, '..', 'package.json'))('argon2')
const verify = argon2.verify
const log = process.env.FLOWADMIN_VERIFY_LOG

argon2.verify = async function probedVerify(digest, ...rest) {
  const result = await verify.call(this, digest, ...rest)
  if (log) appendFileSync(log, `${digest}\n`)
  return result
}
