// A real OpenLDAP slapd (Debian's `slapd` package) for the directory's tests and bench: its own folder, config
// and database, on a free port of 127.0.0.1, filled with an LDIF of people and groups (some with
// Active Directory's sAMAccountName and userAccountControl); with TLS, a test CA made with openssl
// signs its certificate for StartTLS. It can be stopped, paused (no answers at all) and started
// again with the same data. Where slapd is missing it fails and says what to install: the tests
// and the bench never install it (CI's .ci/run does) and never skip.
import { execFileSync, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import * as path from 'node:path'

export const BASE = 'dc=example,dc=org'
export const PEOPLE = `ou=people,${BASE}`
export const GROUPS = `ou=groups,${BASE}`
export const SERVICE_DN = `cn=flowadmin,ou=services,${BASE}`
export const SERVICE_PASSWORD = 'the service account’s password'
const ROOT_DN = `cn=admin,${BASE}`
const ROOT_PASSWORD = randomBytes(12).toString('hex')
/** The longest slapd may take to listen. */
const START_DEADLINE_MS = 15_000

/** The people of the test directory: name → password, groups, and whether the account is disabled. */
export const PEOPLE_OF_DIRECTORY = {
  ada: { password: 'ada directory password', groups: ['nr-admins'] },
  dev: { password: 'dev directory password', groups: ['nr-deployers'] },
  vic: { password: 'vic directory password', groups: ['nr-viewers'] },
  mal: { password: 'mal directory password', groups: ['marketing'] },
  dis: { password: 'dis directory password', groups: ['nr-viewers'], disabled: true },
  // The name of a user configured in flowadmin's settings too.
  admin: { password: 'the directory’s admin password', groups: ['nr-admins'] },
}

/** Fails, saying what to install, where a program is missing. */
export function requireProgram(program, args, pkg) {
  try {
    execFileSync(program, args, { stdio: 'ignore' })
  } catch (error) {
    if (error.code === 'ENOENT')
      throw new Error(
        `${program} is not installed: apt-get install ${pkg} (CI's .ci/run installs it; docs/development.md)`,
      )
  }
}

/** `{SSHA}` of a password, as slapd stores and checks it. */
function ssha(password) {
  const salt = randomBytes(8)
  const digest = createHash('sha1').update(password).update(salt).digest()
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`
}

/** The schema of the attributes of Active Directory the test entries carry (their own OIDs). */
const AD_SCHEMA = `attributetype ( 1.2.840.113556.1.4.8 NAME 'userAccountControl' SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.4203.666.11.1 NAME 'flowadminTestAccount' AUXILIARY MAY ( sAMAccountName $ userAccountControl ) )
`

function ldif() {
  const entries = [
    `dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example`,
    `dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: people`,
    `dn: ${GROUPS}\nobjectClass: organizationalUnit\nou: groups`,
    `dn: ou=services,${BASE}\nobjectClass: organizationalUnit\nou: services`,
    `dn: ${SERVICE_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: flowadmin\nuserPassword: ${ssha(SERVICE_PASSWORD)}`,
  ]
  const groups = new Map()
  for (const [name, person] of Object.entries(PEOPLE_OF_DIRECTORY)) {
    const disabled = 'disabled' in person && person.disabled
    entries.push(
      `dn: uid=${name},${PEOPLE}\nobjectClass: inetOrgPerson\nobjectClass: flowadminTestAccount\nuid: ${name}\ncn: ${name}\nsn: ${name}\n` +
        `sAMAccountName: ${name}\nuserAccountControl: ${disabled ? 514 : 512}\nuserPassword: ${ssha(person.password)}`,
    )
    for (const group of person.groups) groups.set(group, [...(groups.get(group) ?? []), name])
  }
  for (const [group, members] of groups) {
    entries.push(
      `dn: cn=${group},${GROUPS}\nobjectClass: groupOfNames\ncn: ${group}\n${members.map((name) => `member: uid=${name},${PEOPLE}`).join('\n')}`,
    )
  }
  return `${entries.join('\n\n')}\n`
}

/** A CA, and a certificate it signs for 127.0.0.1; another CA that signed nothing here. */
async function makeCertificates(dir) {
  const file = (name) => path.join(dir, name)
  const openssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' })
  for (const ca of ['ca', 'wrong-ca']) {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=flowadmin test ${ca}`,
      '-keyout',
      file(`${ca}.key`),
      '-out',
      file(`${ca}.pem`),
    )
  }
  await writeFile(file('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  )
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    file('san.cnf'),
    '-out',
    file('server.pem'),
  )
  return {
    ca: file('ca.pem'),
    wrongCa: file('wrong-ca.pem'),
    cert: file('server.pem'),
    key: file('server.key'),
  }
}

/** A port free on 127.0.0.1 now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

/** A port that takes a TCP connection now. */
async function listening(port, deadline) {
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    if (Date.now() > deadline)
      throw new Error(`slapd did not listen on ${port} within ${START_DEADLINE_MS} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * Starts slapd in a folder of its own, filled with PEOPLE_OF_DIRECTORY and their groups; with
 * `tls`, StartTLS with a test CA (`ca`; `wrongCa` signed nothing here), and nothing answered
 * without it. See slapd.d.mts for what it returns.
 */
export async function startSlapd(options = {}) {
  requireProgram('slapd', ['-VV'], 'slapd ldap-utils')
  requireProgram('ldapadd', ['-VV'], 'ldap-utils')
  const dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-slapd-'))
  await mkdir(path.join(dir, 'db'))
  const certificates = options.tls === true ? await makeCertificates(dir) : null
  await writeFile(path.join(dir, 'ad.schema'), AD_SCHEMA)
  const config = [
    'include /etc/ldap/schema/core.schema',
    'include /etc/ldap/schema/cosine.schema',
    'include /etc/ldap/schema/inetorgperson.schema',
    `include ${path.join(dir, 'ad.schema')}`,
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    'moduleload memberof',
    `pidfile ${path.join(dir, 'slapd.pid')}`,
    ...(certificates === null
      ? []
      : [
          `TLSCACertificateFile ${certificates.ca}`,
          `TLSCertificateFile ${certificates.cert}`,
          `TLSCertificateKeyFile ${certificates.key}`,
          // Nothing but StartTLS is answered: a client that skipped it would be refused.
          'security tls=1',
        ]),
    'database mdb',
    `suffix "${BASE}"`,
    `rootdn "${ROOT_DN}"`,
    `rootpw ${ROOT_PASSWORD}`,
    `directory ${path.join(dir, 'db')}`,
    'maxsize 10485760',
    'overlay memberof',
    'access to attrs=userPassword by anonymous auth by * none',
    `access to * by dn.exact="${SERVICE_DN}" read by * none`,
  ].join('\n')
  await writeFile(path.join(dir, 'slapd.conf'), `${config}\n`)
  await writeFile(path.join(dir, 'data.ldif'), ldif())
  const port = await freePort()
  const url = `ldap://127.0.0.1:${port}`
  let child = null

  const start = async () => {
    const started = spawn('slapd', ['-d', '0', '-h', `${url}/`, '-f', path.join(dir, 'slapd.conf')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    started.stderr?.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk
    })
    child = started
    const ended = new Promise((_resolve, reject) =>
      started.once('exit', (code) =>
        reject(new Error(`slapd ended (${code}) before it listened:\n${stderr}`)),
      ),
    )
    await Promise.race([listening(port, Date.now() + START_DEADLINE_MS), ended])
  }
  const stop = async () => {
    const running = child
    child = null
    if (running === null || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGCONT')
    running.kill('SIGTERM')
    await exited
  }

  await start()
  execFileSync(
    'ldapadd',
    [
      ...(certificates === null ? [] : ['-ZZ']),
      '-x',
      '-H',
      url,
      '-D',
      ROOT_DN,
      '-w',
      ROOT_PASSWORD,
      '-f',
      path.join(dir, 'data.ldif'),
    ],
    {
      stdio: 'pipe',
      env: { ...process.env, ...(certificates !== null && { LDAPTLS_CACERT: certificates.ca }) },
    },
  )
  return {
    url,
    port,
    dir,
    ca: certificates?.ca ?? null,
    wrongCa: certificates?.wrongCa ?? null,
    stop,
    start,
    pause: () => {
      child?.kill('SIGSTOP')
    },
    resume: () => {
      child?.kill('SIGCONT')
    },
    async close() {
      await stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
