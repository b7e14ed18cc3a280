import type { Metrics } from '../adapters/metrics.js'

/**
 * The metrics listener's whole app: `GET /metrics` (and HEAD), nothing else. It needs no token,
 * which is why it listens on loopback only.
 */
export function metricsFetch(metrics: Pick<Metrics, 'exposition'>): (request: Request) => Promise<Response> {
  return async (request) => {
    const { pathname } = new URL(request.url)
    if (pathname !== '/metrics') return new Response(null, { status: 404 })
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response(null, { status: 405, headers: { Allow: 'GET, HEAD' } })
    }
    const { contentType, body } = await metrics.exposition()
    return new Response(request.method === 'HEAD' ? null : body, {
      headers: {
        'Content-Type': contentType,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
    })
  }
}
