/**
 * A minimal Prometheus registry: counters, gauges and histograms with labels, rendered in the text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). No dependency, no allocation per observation
 * beyond the first of a label set.
 * @module
 */

type Labels = Record<string, string | number>

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
/** The series key of a label set. A plain loop: it runs several times per request. */
const key = (names: string[], l: Labels) => {
	let k = String(l[names[0]!] ?? '')
	for (let i = 1; i < names.length; i++) k += `\u0000${l[names[i]!] ?? ''}`
	return k
}
const render = (names: string[], values: string[], extra = '') => {
	const parts = names.map((n, i) => `${n}="${escape(values[i]!)}"`)
	if (extra) parts.push(extra)
	return parts.length ? `{${parts.join(',')}}` : ''
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
	private values = new Map<string, number>()
	inc(labels: Labels = {}, by = 1) {
		const k = key(this.labelNames, labels)
		this.values.set(k, (this.values.get(k) ?? 0) + by)
	}
	lines() {
		return [...this.header('counter'), ...[...this.values].map(([k, v]) => `${this.name}${render(this.labelNames, k.split('\u0000'))} ${v}`)]
	}
}

export class Gauge extends Metric {
	private values = new Map<string, number>()
	inc(labels: Labels = {}, by = 1) {
		const k = key(this.labelNames, labels)
		this.values.set(k, (this.values.get(k) ?? 0) + by)
	}
	dec(labels: Labels = {}, by = 1) {
		this.inc(labels, -by)
	}
	set(labels: Labels, v: number) {
		this.values.set(key(this.labelNames, labels), v)
	}
	get(labels: Labels = {}) {
		return this.values.get(key(this.labelNames, labels)) ?? 0
	}
	lines() {
		return [...this.header('gauge'), ...[...this.values].map(([k, v]) => `${this.name}${render(this.labelNames, k.split('\u0000'))} ${v}`)]
	}
}

export class Histogram extends Metric {
	private series = new Map<string, { counts: number[]; sum: number; n: number }>()
	constructor(
		name: string,
		help: string,
		labelNames: string[],
		readonly buckets: number[],
	) {
		super(name, help, labelNames)
	}
	observe(labels: Labels, v: number) {
		const k = key(this.labelNames, labels)
		let s = this.series.get(k)
		if (!s) this.series.set(k, (s = { counts: this.buckets.map(() => 0), sum: 0, n: 0 }))
		for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) s.counts[i]!++
		s.sum += v
		s.n++
	}
	lines() {
		const out = this.header('histogram')
		for (const [k, s] of this.series) {
			const vals = k.split('\u0000')
			this.buckets.forEach((b, i) => out.push(`${this.name}_bucket${render(this.labelNames, vals, `le="${b}"`)} ${s.counts[i]}`))
			out.push(`${this.name}_bucket${render(this.labelNames, vals, 'le="+Inf"')} ${s.n}`)
			out.push(`${this.name}_sum${render(this.labelNames, vals)} ${s.sum}`)
			out.push(`${this.name}_count${render(this.labelNames, vals)} ${s.n}`)
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
