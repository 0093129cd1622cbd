/**
 * A minimal Prometheus registry: counters, gauges and histograms with labels, rendered in the text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). No dependency, no allocation per observation
 * beyond the first of a label set (`Series`).
 * @module
 */

type Labels = Record<string, string | number>

/** What a call without labels reads: one object, where a default `= {}` made one per call (twice per stream). */
const NO_LABELS: Labels = Object.freeze({})

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const render = (names: string[], values: string[], extra = '') => {
	const parts = names.map((n, i) => `${n}="${escape(values[i]!)}"`)
	if (extra) parts.push(extra)
	return parts.length ? `{${parts.join(',')}}` : ''
}

/** A label's value as the series tells it: numbers as their text, so 200 and '200' are one series. */
const labelValue = (v: string | number | undefined) => (typeof v === 'number' ? String(v) : (v ?? ''))

/**
 * A metric's series by label values, in nested maps (one level per label): a lookup builds no key string, so an
 * observation allocates nothing once its label set exists (several run per request).
 */
class Series<T> {
	private readonly root = new Map<string, unknown>()
	/** Every series with its label values, in the order they appeared (for rendering). */
	readonly all: { values: string[]; data: T }[] = []
	constructor(
		private readonly names: string[],
		private readonly make: () => T,
	) {}
	/** The label set's series, made on first use. */
	get(l: Labels): T {
		return this.walk(l, true)!
	}
	/** The label set's series if it exists. */
	find(l: Labels): T | undefined {
		return this.walk(l, false)
	}
	private walk(l: Labels, create: boolean): T | undefined {
		const names = this.names
		let m = this.root
		for (let i = 0; i < names.length - 1; i++) {
			const v = labelValue(l[names[i]!])
			let next = m.get(v) as Map<string, unknown> | undefined
			if (!next) {
				if (!create) return undefined
				m.set(v, (next = new Map()))
			}
			m = next
		}
		const last = names.length ? labelValue(l[names[names.length - 1]!]) : ''
		let s = m.get(last) as { values: string[]; data: T } | undefined
		if (!s) {
			if (!create) return undefined
			s = { values: names.map((n) => labelValue(l[n])), data: this.make() }
			m.set(last, s)
			this.all.push(s)
		}
		return s.data
	}
}

abstract class Metric {
	constructor(
		readonly name: string,
		readonly help: string,
		readonly labelNames: string[],
	) {}
	abstract lines(): string[]
	header(type: string) {
		return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${type}`]
	}
}

export class Counter extends Metric {
	private series = new Series(this.labelNames, () => ({ v: 0 }))
	inc(labels: Labels = NO_LABELS, by = 1) {
		this.series.get(labels).v += by
	}
	lines() {
		return [...this.header('counter'), ...this.series.all.map((s) => `${this.name}${render(this.labelNames, s.values)} ${s.data.v}`)]
	}
}

export class Gauge extends Metric {
	private series = new Series(this.labelNames, () => ({ v: 0 }))
	inc(labels: Labels = NO_LABELS, by = 1) {
		this.series.get(labels).v += by
	}
	dec(labels: Labels = NO_LABELS, by = 1) {
		this.inc(labels, -by)
	}
	set(labels: Labels, v: number) {
		this.series.get(labels).v = v
	}
	get(labels: Labels = NO_LABELS) {
		return this.series.find(labels)?.v ?? 0
	}
	lines() {
		return [...this.header('gauge'), ...this.series.all.map((s) => `${this.name}${render(this.labelNames, s.values)} ${s.data.v}`)]
	}
}

export class Histogram extends Metric {
	private series: Series<{ counts: number[]; sum: number; n: number }>
	constructor(
		name: string,
		help: string,
		labelNames: string[],
		readonly buckets: number[],
	) {
		super(name, help, labelNames)
		this.series = new Series(labelNames, () => ({ counts: buckets.map(() => 0), sum: 0, n: 0 }))
	}
	observe(labels: Labels, v: number) {
		const s = this.series.get(labels)
		for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) s.counts[i]!++
		s.sum += v
		s.n++
	}
	lines() {
		const out = this.header('histogram')
		for (const { values, data: s } of this.series.all) {
			this.buckets.forEach((b, i) => out.push(`${this.name}_bucket${render(this.labelNames, values, `le="${b}"`)} ${s.counts[i]}`))
			out.push(`${this.name}_bucket${render(this.labelNames, values, 'le="+Inf"')} ${s.n}`)
			out.push(`${this.name}_sum${render(this.labelNames, values)} ${s.sum}`)
			out.push(`${this.name}_count${render(this.labelNames, values)} ${s.n}`)
		}
		return out
	}
}

export class Registry {
	private metrics: Metric[] = []
	register<M extends Metric>(m: M): M {
		this.metrics.push(m)
		return m
	}
	render(): string {
		return this.metrics.flatMap((m) => m.lines()).join('\n') + '\n'
	}
}
