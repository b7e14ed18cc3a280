// `node bench/fleet-floor-server.mjs` (spawned by the fleet-scale scenario): the floor of an idle
// fleet's cost. A raw node:http server that speaks the fleet's protocol as the lean agents use
// it, with nothing behind: a report is taken (204), a poll without If-None-Match gets a fixed
// desired state with its ETag, one with it is held `Prefer: wait=N` seconds (at most 120), then
// answered 304. No authentication, no store, no leases. It prints `listening on URL`.
import http from 'node:http'

const DESIRED = JSON.stringify({
  version: '1',
  prune: false,
  hold: 15,
  modules: [],
  installs: [],
  removals: [],
})
const HEADERS = { etag: '"1"', 'cache-control': 'no-store' }

const server = http.createServer((req, res) => {
  if (req.method === 'POST') {
    req.resume()
    req.on('end', () => {
      res.writeHead(204)
      res.end()
    })
    return
  }
  if (req.headers['if-none-match'] === undefined) {
    res.writeHead(200, { ...HEADERS, 'content-type': 'application/json' })
    res.end(DESIRED)
    return
  }
  const wait = Math.min(120, Number(/wait=(\d{1,6})/.exec(req.headers.prefer ?? '')?.[1] ?? 0))
  const timer = setTimeout(() => {
    res.writeHead(304, HEADERS)
    res.end()
  }, wait * 1000)
  res.on('close', () => clearTimeout(timer))
})
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`))
