/**
 * Display formatting shared by the browser console and the server-rendered /pricing page (no DOM, no Preact).
 * @module
 */

/**
 * USD with as many decimals as the amount needs (prices such as $0.075 must not round to $0.08), at least two.
 * @example usd(0.075) === '$0.075'; usd(12) === '$12.00'; usd(-1.5) === '-$1.50'
 */
export function usd(v: number | null | undefined): string {
	if (v === null || v === undefined || !Number.isFinite(v)) return '—'
	const abs = Math.abs(v)
	let s = abs.toFixed(6).replace(/0+$/, '')
	const [int, frac = ''] = s.split('.')
	s = `${Number(int).toLocaleString('en-US')}.${frac.padEnd(2, '0')}`
	return `${v < 0 ? '-' : ''}$${s}`
}

/** @example tokens(1234567) === '1,234,567' */
export const tokens = (n: number) => n.toLocaleString('en-US')

/** @example dateTime('2025-01-02T03:04:05Z') // '2025-01-02 03:04' in the viewer's zone */
export function dateTime(iso: string | null | undefined): string {
	if (!iso) return '—'
	const d = new Date(iso)
	if (Number.isNaN(d.getTime())) return '—'
	const p = (n: number) => String(n).padStart(2, '0')
	return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`
}

/**
 * "3 min ago", "in 2 days", "just now".
 * @example relative('2025-01-01T00:00:00Z', Date.parse('2025-01-01T00:05:00Z')) === '5 min ago'
 */
export function relative(iso: string | null | undefined, now = Date.now()): string {
	if (!iso) return 'never'
	const diff = Date.parse(iso) - now
	const abs = Math.abs(diff)
	if (abs < 45_000) return 'just now'
	const units: Array<[number, string]> = [
		[60_000, 'min'],
		[3_600_000, 'h'],
		[86_400_000, 'day'],
	]
	let [size, name] = units[0]!
	for (const u of units) if (abs >= u[0]) [size, name] = u
	const n = Math.round(abs / size)
	const label = name === 'day' ? `${n} day${n === 1 ? '' : 's'}` : `${n} ${name}`
	return diff < 0 ? `${label} ago` : `in ${label}`
}

/** @example latency(1530) === '1.53 s'; latency(87) === '87 ms' */
export const latency = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms} ms`)

/**
 * A name as an isolate (U+2068 … U+2069) for plain text such as a toast: a user's name with a right-to-left override
 * would otherwise reverse the words after it. In markup, `<bdi>` does the same.
 * @example isolated('a\u202Eb') === '\u2068a\u202Eb\u2069'
 */
export const isolated = (name: string) => `\u2068${name}\u2069`
