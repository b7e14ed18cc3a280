// Preloaded into a server under test (NODE_OPTIONS=--require) by the bench's login storm: records
// the event loop's delay (node:perf_hooks monitorEventLoopDelay, 1 ms resolution). Each SIGUSR2
// prints what was recorded since the last one as one line on stderr, then starts over.
'use strict'
const { monitorEventLoopDelay } = require('node:perf_hooks')

const histogram = monitorEventLoopDelay({ resolution: 1 })
histogram.enable()
process.on('SIGUSR2', () => {
  const ms = (ns) => ns / 1e6
  const figures = {
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    mean: ms(histogram.mean),
    count: histogram.count,
  }
  histogram.reset()
  process.stderr.write(`bench-loop-delay ${JSON.stringify(figures)}\n`)
})
