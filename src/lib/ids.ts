/** Random ids from the platform CSPRNG. */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Character codes of the alphabet, indexed by a byte's value modulo 62. */
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0))

/**
 * Unbiased random string over [A-Za-z0-9] (rejection sampling, so every character is equally likely). The characters
 * go into one array and become one string: appended one by one, each would be a string of its own (a rope node per
 * character; a request id is made for every request).
 * @example randomString(8) // 'f3K9aZ0q'
 */
export function randomString(length: number): string {
	const codes = new Uint8Array(length)
	let n = 0
	while (n < length) {
		const bytes = crypto.getRandomValues(new Uint8Array(length * 2))
		// An indexed loop: iterating a typed array with for…of goes through its iterator (this runs per request).
		for (let i = 0; i < bytes.length && n < length; i++) {
			const b = bytes[i]!
			if (b < 248) codes[n++] = CODES[b % 62]! // 248 = 62 * 4: drop the tail that would bias
		}
	}
	return String.fromCharCode.apply(null, codes as unknown as number[])
}

/** @example newId('chatcmpl') // 'chatcmpl-Xy12…' */
export const newId = (prefix: string, length = 24): string => `${prefix}${prefix.endsWith('_') ? '' : '-'}${randomString(length)}`

export const requestId = (): string => `req_${randomString(24)}`
