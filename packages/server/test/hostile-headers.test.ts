// Response headers over the built server: nosniff on every answer, and CORS headers only for the
// origins httpAdminCors lists.
import * as path from 'node:path'
import { openDatabase } from '@flowadmin/adapter-sqlite'
import { describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, login, type RawResponse, send, tokenOf, useWorkspace } from './hostile-http.js'

const EDITOR = 'https://editor.example'

const workspace = useWorkspace()

const corsHeaders = (res: RawResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => name.startsWith('access-control-')))

/** One answer of each kind the API gives, from a browser page at `origin`. */
async function everyKindOfAnswer(url: string, origin: string): Promise<Record<string, RawResponse>> {
  const headers = { origin }
  const token = await tokenOf(login(url, { username: 'admin', password: ADMIN_PASSWORD }))
  const auth = { ...headers, authorization: `Bearer ${token}` }
  const answers: Record<string, RawResponse> = {
    '200': await send(url, { path: '/auth/login', headers }),
    '400': await send(url, {
      method: 'PUT',
      path: '/nodes/flowadmin-example-greeting',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"enabled":',
    }),
    '401': await send(url, { path: '/settings', headers }),
    '404': await send(url, { path: '/no/such/route', headers }),
    '413': await send(url, {
      method: 'POST',
      path: '/auth/token',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=${'u'.repeat(70_000)}`,
    }),
  }
  for (let i = 0; i < 6; i++) {
    answers['429'] = await send(url, {
      method: 'POST',
      path: '/auth/token',
      from: '127.0.0.40',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=service-admin&grant_type=password&scope=*&username=admin&password=guess',
    })
  }
  // A store that fails under the server (its token table gone) makes a login an unexpected failure.
  const db = openDatabase(path.join(workspace.userDir, 'flowadmin.db'))
  db.exec('DROP TABLE tokens')
  db.close()
  answers['500'] = await send(url, {
    method: 'POST',
    path: '/auth/token',
    from: '127.0.0.41',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: ADMIN_PASSWORD,
    }).toString(),
  })
  answers.preflight = await send(url, {
    method: 'OPTIONS',
    path: '/nodes/flowadmin-example-greeting',
    headers: {
      ...headers,
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'authorization,content-type',
    },
  })
  return answers
}

describe('response headers', () => {
  it('carry nosniff on every answer, and no CORS header without httpAdminCors', async () => {
    const { url } = await workspace.start()
    const answers = await everyKindOfAnswer(url, EDITOR)
    expect(Object.fromEntries(Object.entries(answers).map(([kind, res]) => [kind, res.status]))).toEqual({
      '200': 200,
      '400': 400,
      '401': 401,
      '404': 404,
      '413': 413,
      '429': 429,
      '500': 500,
      preflight: 404,
    })
    for (const [kind, res] of Object.entries(answers)) {
      expect({ kind, nosniff: res.headers['x-content-type-options'] }).toEqual({ kind, nosniff: 'nosniff' })
      expect({ kind, cors: corsHeaders(res) }).toEqual({ kind, cors: {} })
      expect({ kind, vary: res.headers.vary }).toEqual({ kind, vary: undefined })
    }
    // The 500 says nothing of the cause.
    expect(JSON.parse(answers['500']?.body ?? '')).toEqual({
      code: 'unexpected_error',
      message: 'Internal error',
    })
  })

  it('with httpAdminCors, name exactly the listed origin, and nothing for any other', async () => {
    await workspace.writeSettings({ httpAdminCors: { origin: [EDITOR, 'http://127.0.0.1:3000'] } })
    const { url } = await workspace.start()

    const listed = await everyKindOfAnswer(url, EDITOR)
    expect(listed.preflight?.status).toBe(204)
    expect(corsHeaders(listed.preflight as RawResponse)).toEqual({
      'access-control-allow-origin': EDITOR,
      'access-control-allow-methods': 'GET, HEAD, POST, PUT, DELETE',
      'access-control-allow-headers': 'Authorization, Content-Type',
      'access-control-max-age': '600',
    })
    for (const [kind, res] of Object.entries(listed)) {
      expect({ kind, origin: res.headers['access-control-allow-origin'], vary: res.headers.vary }).toEqual({
        kind,
        origin: EDITOR,
        vary: 'Origin',
      })
      expect(res.headers['x-content-type-options']).toBe('nosniff')
    }

    for (const origin of ['https://evil.example', 'https://editor.example.evil.example', 'null']) {
      const page = await send(url, { path: '/auth/login', headers: { origin } })
      expect(page.status).toBe(200)
      expect(corsHeaders(page)).toEqual({})
      const preflight = await send(url, {
        method: 'OPTIONS',
        path: '/auth/token',
        headers: { origin, 'access-control-request-method': 'POST' },
      })
      expect(preflight.status).toBe(404)
      expect(corsHeaders(preflight)).toEqual({})
    }
  })
})
