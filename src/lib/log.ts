/**
 * Structured JSON logs, one line each. Values pass through `redact`, so keys and upstream secrets never reach a log
 * line even when an error message embeds them (WIRE-NOTES litellm #11264, #8075).
 * @module
 */

export type Logger = {
	debug(msg: string, fields?: Record<string, unknown>): void
	info(msg: string, fields?: Record<string, unknown>): void
	warn(msg: string, fields?: Record<string, unknown>): void
	error(msg: string, fields?: Record<string, unknown>): void
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const

const SECRET_PATTERNS: Array<[RegExp, string]> = [
	[/\bsk-[A-Za-z0-9_-]{8,}/g, 'sk-***'],
	[/([?&](?:key|api_key|token)=)[^&\s"]+/gi, '$1***'],
	[/(bearer\s+)[A-Za-z0-9._~+/=-]+/gi, '$1***'],
	[/("?(?:authorization|x-api-key|x-goog-api-key|mj-api-secret|api_key|apiKey|password)"?\s*[:=]\s*"?)[^",}\s]+/gi, '$1***'],
	// Drizzle's "Failed query: …\nparams: …" carries the bound values: a new key's hash and ciphertext, a session's
	// CSRF token. The query text says where it failed; the values stay out (here as JSON-escaped text: `\n`, `\"`).
	[/(\\nparams: )(?:[^"\\]|\\[^n])*/g, '$1***'],
	// Google API keys (the Gemini channels') have no prefix that the patterns above catch.
	[/\bAIza[0-9A-Za-z_-]{35}\b/g, 'AIza***'],
]

/** @example redact('Bearer sk-abc123456789') === 'Bearer ***' */
export function redact(s: string): string {
	let out = s
	for (const [re, rep] of SECRET_PATTERNS) out = out.replace(re, rep)
	return out
}

export function createLogger(level: keyof typeof LEVELS = 'info', write: (line: string) => void = (l) => console.log(l)): Logger {
	const min = LEVELS[level]
	const emit = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
		if (LEVELS[lvl] < min) return
		write(redact(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })))
	}
	return {
		debug: (m, f) => emit('debug', m, f),
		info: (m, f) => emit('info', m, f),
		warn: (m, f) => emit('warn', m, f),
		error: (m, f) => emit('error', m, f),
	}
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
