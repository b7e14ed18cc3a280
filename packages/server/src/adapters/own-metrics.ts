// flowadmin's own metrics, counted in plain objects from the start: counters, gauges read at each
// scrape, and histograms for the hot paths. Their figures have the shape of prom-client's JSON
// (`Registry.getMetricsAsJSON()`), which its registry turns into the exposition at a scrape.

/** One series of a metric: its labels and its value. */
export interface Sample {
  labels: Record<string, string>
  value: number
}

/**
 * A metric as prom-client's `Registry.getMetricsAsJSON()` gives one (the shape its index.d.ts
 * declares and `AggregatorRegistry.aggregate` takes): name, help, type, aggregator and the series
 * now, a histogram's each named (`_bucket`, `_sum`, `_count`).
 */
interface MetricFigures {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram'
  aggregator: 'sum'
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>
}

/** One of flowadmin's own metrics: its figures as they stand, read at each scrape. */
export interface OwnMetric {
  figures(): MetricFigures
}

/** An own metric whose series are read by `values` at each scrape. */
function ownMetric(
  name: string,
  help: string,
  type: MetricFigures['type'],
  values: () => MetricFigures['values'],
): OwnMetric {
  return { figures: () => ({ name, help, type, aggregator: 'sum', values: values() }) }
}

/**
 * A counter kept in a plain map (one entry a label set), with the series it has from the start, at
 * 0, so that rates and alerts work at once.
 */
export function createCounter(
  name: string,
  { help, start }: { help: string; start: Array<Record<string, string>> },
) {
  const series = new Map<string, Sample>()
  const counter = {
    inc(labels: Record<string, string>, by = 1) {
      const key = JSON.stringify(labels)
      const sample = series.get(key)
      if (sample === undefined) series.set(key, { labels, value: by })
      else sample.value += by
    },
    metric: ownMetric(name, help, 'counter', () => [...series.values()]),
  }
  for (const labels of start) counter.inc(labels, 0)
  return counter
}

/** A gauge whose series are read at each scrape, by `collect`. */
export function createGauge(options: { name: string; help: string; collect: () => Sample[] }) {
  const { name, help, collect } = options
  return { metric: ownMetric(name, help, 'gauge', collect) }
}

export interface AggregatedChild {
  observe(seconds: number): void
}

/**
 * A Prometheus histogram for the hot paths (every request, every store call): each label set
 * is looked up once by its caller and keeps plain counts, so an observation is a bucket search
 * and three additions. prom-client's own Histogram hashes the labels on every observation, which
 * costs more than the store call it times. Its figures are those of a histogram in prom-client's
 * JSON (cumulative `_bucket` series with `le`, `_sum`, `_count`), so the exposition is the same.
 */
export function createAggregatedHistogram(options: {
  name: string
  help: string
  labelNames: readonly string[]
  buckets: readonly number[]
}) {
  const { name, help, labelNames, buckets } = options
  const children: Array<{
    labels: Record<string, string>
    counts: Float64Array
    sum: number
    count: number
  }> = []
  return {
    child(values: readonly string[]): AggregatedChild {
      const labels = Object.fromEntries(labelNames.map((label, index) => [label, values[index] ?? '']))
      const state = { labels, counts: new Float64Array(buckets.length), sum: 0, count: 0 }
      children.push(state)
      return {
        observe(seconds) {
          let index = 0
          while (index < buckets.length && seconds > (buckets[index] as number)) index++
          if (index < buckets.length) state.counts[index] = (state.counts[index] as number) + 1
          state.sum += seconds
          state.count++
        },
      }
    },
    metric: ownMetric(name, help, 'histogram', () => {
      const values: MetricFigures['values'] = []
      for (const { labels, counts, sum, count } of children) {
        let cumulative = 0
        buckets.forEach((le, index) => {
          cumulative += counts[index] as number
          values.push({ metricName: `${name}_bucket`, labels: { le, ...labels }, value: cumulative })
        })
        values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: count })
        values.push({ metricName: `${name}_sum`, labels, value: sum })
        values.push({ metricName: `${name}_count`, labels, value: count })
      }
      return values
    }),
  }
}
