/** The Create/Edit token expiry choices and their conversion to the API's `expires_at`. */

export type ExpiryChoice = 'never' | '1h' | '1d' | '7d' | '30d' | 'date'

export const EXPIRY_OPTIONS: Array<{ value: ExpiryChoice; label: string }> = [
	{ value: 'never', label: 'Never' },
	{ value: '1h', label: '1 hour' },
	{ value: '1d', label: '1 day' },
	{ value: '7d', label: '7 days' },
	{ value: '30d', label: '30 days' },
	{ value: 'date', label: 'On a date…' },
]

const HOUR = 3_600_000
const SPANS: Partial<Record<ExpiryChoice, number>> = { '1h': HOUR, '1d': 24 * HOUR, '7d': 7 * 24 * HOUR, '30d': 30 * 24 * HOUR }

/**
 * ISO-8601 `expires_at` for a choice (null = never). A date means the key works through the end of that day in
 * the viewer's time zone. Throws an Error with a readable message when the date is missing or not in the future.
 * @example expiryToIso('1h', '', new Date('2025-01-01T00:00:00Z')) === '2025-01-01T01:00:00.000Z'
 */
export function expiryToIso(choice: ExpiryChoice, date: string, now = new Date()): string | null {
	if (choice === 'never') return null
	const span = SPANS[choice]
	if (span) return new Date(now.getTime() + span).toISOString()
	const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
	if (!m) throw new Error('Choose the date the key expires')
	const end = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59, 999)
	if (Number.isNaN(end.getTime()) || end.getTime() <= now.getTime()) throw new Error('The expiry date must be in the future')
	return end.toISOString()
}

/** `YYYY-MM-DD` of a date in the viewer's zone (value for `<input type="date">`). */
export function localDate(d: Date): string {
	const p = (n: number) => String(n).padStart(2, '0')
	return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`
}
