/** Random ids from the platform CSPRNG. */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/**
 * Unbiased random string over [A-Za-z0-9] (rejection sampling, so every character is equally likely).
 * @example randomString(8) // 'f3K9aZ0q'
 */
export function randomString(length: number): string {
	let out = ''
	while (out.length < length) {
		const bytes = crypto.getRandomValues(new Uint8Array(length * 2))
		// An indexed loop: iterating a typed array with for…of goes through its iterator (this runs per request).
		for (let i = 0; i < bytes.length && out.length < length; i++) {
			const b = bytes[i]!
			if (b < 248) out += ALPHABET[b % 62] // 248 = 62 * 4: drop the tail that would bias
		}
	}
	return out
}

/** @example newId('chatcmpl') // 'chatcmpl-Xy12…' */
export const newId = (prefix: string, length = 24): string => `${prefix}${prefix.endsWith('_') ? '' : '-'}${randomString(length)}`

export const requestId = (): string => `req_${randomString(24)}`
