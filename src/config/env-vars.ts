/**
 * The one parser of environment settings. Every variable the server reads goes through it once, at start
 * (config/env.ts), so a value it cannot use stops the start naming the variable and what it accepts, rather than
 * falling back to a default somewhere (a `LEDGER_FLUSH_MS=100ms` used to flush every 100 ms unnoticed; a
 * `LOG_LEVEL=verbose` logged at `info`). Unset or blank means the default, as a compose file's `NAME=` leaves it.
 * Problems are collected, so one refused start names all of them.
 * @module
 */

/** The longest delay a timer takes: past 2^31 − 1 ms (24.8 days) Bun's and Node's timers fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

type IntRange = { min?: number; max?: number }

export type EnvReader = {
	/** The value, trimmed; undefined when unset or blank. */
	text(name: string): string | undefined
	/** A secret exactly as given, never trimmed (a key's spaces are part of it); undefined when unset or empty. */
	secret(name: string): string | undefined
	/** A whole number within [min, max] (min defaults to 0). */
	int(name: string, fallback: number, range?: IntRange): number
	/** A number above `above` (non-integers allowed). */
	number(name: string, fallback: number, above: number): number
	/** `true`/`false`, also `1`/`0`, `yes`/`no`, `on`/`off`, any case. */
	bool(name: string, fallback: boolean): boolean
	/** One of `options` (any case). */
	choice<T extends string>(name: string, fallback: T, options: readonly T[]): T
	/** A URL with one of `schemes` (`https:` …); its text as given, a trailing slash kept. */
	url(name: string, schemes: readonly string[]): string | undefined
	/** A comma-separated list whose every entry `check` accepts (else it names the entry and `what` the list takes). */
	list(name: string, what: string, check: (entry: string) => boolean): string[]
	/** Records a problem found by a caller's own check (a relation between two settings). */
	refuse(name: string, message: string): void
	/** Throws one Error naming every bad setting read so far. */
	done(): void
}

/** What `int` says a variable must be. */
const intRule = (min: number, max: number | undefined): string =>
	max !== undefined ? `an integer from ${min} to ${max}` : min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`

/**
 * @example
 * const r = envReader({ LEDGER_FLUSH_MS: '100ms' })
 * r.int('LEDGER_FLUSH_MS', 100, { min: 1 }) // 100, and r.done() throws 'LEDGER_FLUSH_MS must be an integer of at least 1, got "100ms"'
 */
export function envReader(vars: Record<string, string | undefined>): EnvReader {
	const problems: string[] = []
	const text = (name: string) => {
		const v = vars[name]?.trim()
		return v ? v : undefined
	}
	const bad = (name: string, rule: string) => problems.push(`${name} must be ${rule}, got "${vars[name]}"`)
	return {
		text,
		secret: (name) => vars[name] || undefined,
		int(name, fallback, { min = 0, max } = {}) {
			const v = text(name)
			if (v === undefined) return fallback
			const n = /^[+-]?\d+$/.test(v) ? Number(v) : Number.NaN
			if (Number.isSafeInteger(n) && n >= min && (max === undefined || n <= max)) return n
			bad(name, intRule(min, max))
			return fallback
		},
		number(name, fallback, above) {
			const v = text(name)
			if (v === undefined) return fallback
			const n = Number(v)
			if (Number.isFinite(n) && n > above) return n
			bad(name, `a number above ${above}`)
			return fallback
		},
		bool(name, fallback) {
			const v = text(name)?.toLowerCase()
			if (v === undefined) return fallback
			if (['true', '1', 'yes', 'on'].includes(v)) return true
			if (['false', '0', 'no', 'off'].includes(v)) return false
			bad(name, 'true or false')
			return fallback
		},
		choice(name, fallback, options) {
			const v = text(name)?.toLowerCase()
			if (v === undefined) return fallback
			const hit = options.find((o) => o === v)
			if (hit) return hit
			bad(name, `one of ${options.join(', ')}`)
			return fallback
		},
		url(name, schemes) {
			const v = text(name)
			if (v === undefined) return undefined
			let ok = false
			try {
				const u = new URL(v)
				ok = schemes.includes(u.protocol) && (u.host !== '' || u.protocol.endsWith('unix:'))
			} catch {
				ok = false
			}
			if (ok) return v
			bad(name, `a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}`)
			return undefined
		},
		list(name, what, check) {
			const entries = (text(name) ?? '').split(',').map((s) => s.trim()).filter(Boolean)
			const wrong = entries.filter((e) => !check(e))
			if (wrong.length) problems.push(`${name} must list ${what}; "${wrong.join('", "')}" is not one (got "${vars[name]}")`)
			return entries.filter(check)
		},
		refuse(name, message) {
			problems.push(`${name} ${message}`)
		},
		done() {
			if (problems.length) throw new Error(problems.join('; '))
		},
	}
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

/** @example isIpv4('10.0.0.1') === true; isIpv4('10.0.0.256') === false */
export const isIpv4 = (s: string): boolean => IPV4.test(s)

/** `10.0.0.0/8`: an IPv4 address and a prefix length of 0 to 32. */
export function isCidr4(s: string): boolean {
	const [base, bits, more] = s.split('/')
	return more === undefined && bits !== undefined && isIpv4(base!) && /^\d{1,2}$/.test(bits) && Number(bits) <= 32
}

/** An IPv6 address as written in a list (brackets allowed): only `:`, hex digits, and maybe a dotted IPv4 tail. */
export const isIpv6 = (s: string): boolean => s.includes(':') && /^\[?[0-9a-f:.]+\]?$/i.test(s) && s.split('::').length <= 2

/** A DNS host name (`api.example.com`, `localhost`). */
export const isHostName = (s: string): boolean => s.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*\.?$/i.test(s)
