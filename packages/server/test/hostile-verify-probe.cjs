// Preloaded into the server by tests (NODE_OPTIONS=--require): appends the hash of every argon2
// or bcrypt verification, once it has completed, to the file named by FLOWADMIN_VERIFY_LOG. Tests
// count verifications this way instead of timing requests. A hash is no secret: the settings hold it.
const { appendFileSync } = require('node:fs')
const { createRequire } = require('node:module')
const path = require('node:path')

const fromServer = createRequire(path.join(__dirname, '..', 'package.json'))
const argon2 = fromServer('argon2')
const bcrypt = fromServer('@node-rs/bcrypt')
const log = process.env.FLOWADMIN_VERIFY_LOG

const argon2Verify = argon2.verify
argon2.verify = async function probedVerify(digest, ...rest) {
  const result = await argon2Verify.call(this, digest, ...rest)
  if (log) appendFileSync(log, `${digest}\n`)
  return result
}

const bcryptVerify = bcrypt.verify
bcrypt.verify = async function probedVerify(password, digest, ...rest) {
  const result = await bcryptVerify.call(this, password, digest, ...rest)
  if (log) appendFileSync(log, `${digest}\n`)
  return result
}
