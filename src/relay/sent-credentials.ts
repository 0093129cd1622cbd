/**
 * The credentials a call sent upstream, cut out of what the upstream answers. Vendors and proxies repeat them ("bad
 * request for key=…", a proxy echoing the request's headers in its error), and the gateway passes the vendor's words on
 * (upstreamError shows a 4xx's message; the task services' answers go back as they came). Only the attempt loop
 * (routing/attempts.ts) took the channel's key out; the count, stored-response, file and task routes call the upstream
 * themselves. So every credential the call carried (a credential header's value, with and without its `Bearer`, a
 * `key` query parameter) is replaced with `***`, as bytes, so a body keeps streaming and any type of body is covered.
 * @module
 */

const MASK = Buffer.from('***')
/** Header names that carry a credential: Authorization, x-api-key, x-goog-api-key, api-key, mj-api-secret, cf-aig-authorization… */
const CREDENTIAL_HEADER = /auth|key|secret|token/i
const CREDENTIAL_PARAM = /^(?:key|api_key|api-key|token|access_token)$/i
/** Shorter values are no secret worth the false matches (a `Bearer` word, a short test key). */
const MIN_LENGTH = 8

/**
 * What `url` and `headers` carry as credentials, longest first (so a value that contains another is cut whole).
 * @example sentCredentials('https://x/v1?key=AIzaXYZ12345', { authorization: 'Bearer sk-abcdefgh' }) // ['AIzaXYZ12345', 'sk-abcdefgh']
 */
export function sentCredentials(url: string, headers: Record<string, string>): string[] {
	const found = new Set<string>()
	const add = (v: string | null | undefined) => v && v.length >= MIN_LENGTH && found.add(v)
	for (const [name, value] of Object.entries(headers)) {
		if (!CREDENTIAL_HEADER.test(name) || typeof value !== 'string') continue
		add(value)
		// `Bearer sk-…`, `Basic …`: the token alone is what an echo repeats.
		add(/^\S+\s+(\S+)$/.exec(value.trim())?.[1])
	}
	try {
		for (const [name, value] of new URL(url).searchParams) if (CREDENTIAL_PARAM.test(name)) add(value)
	} catch {
		// not a URL: nothing in its query
	}
	return [...found].sort((a, b) => b.length - a.length)
}

/** `text` with every one of `secrets` replaced by `***`. */
export function withoutCredentials(text: string, secrets: readonly string[]): string {
	let out = text
	for (const s of secrets) if (out.includes(s)) out = out.split(s).join('***')
	return out
}

/**
 * A byte stream with every one of `secrets` replaced by `***`, also where one is split across chunks: the last
 * (longest secret − 1) bytes of each chunk wait for the next.
 */
export function credentialScrubber(secrets: readonly string[]): TransformStream<Uint8Array, Uint8Array> {
	const needles = secrets.map((s) => Buffer.from(s))
	const hold = Math.max(...needles.map((n) => n.length)) - 1
	let carry: Buffer = Buffer.alloc(0)
	return new TransformStream({
		transform(chunk, ctl) {
			let buf = carry.length ? Buffer.concat([carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
			for (const n of needles) buf = replaceAll(buf, n)
			// Bytes that may begin a secret the next chunk completes wait for it; the rest go on.
			const keep = Math.min(hold, buf.length)
			carry = Buffer.from(buf.subarray(buf.length - keep))
			if (buf.length > keep) ctl.enqueue(buf.subarray(0, buf.length - keep))
		},
		flush(ctl) {
			if (carry.length) ctl.enqueue(carry)
		},
	})
}

function replaceAll(buf: Buffer, needle: Buffer): Buffer {
	let at = buf.indexOf(needle)
	if (at < 0) return buf
	const parts: Buffer[] = []
	let from = 0
	for (; at >= 0; at = buf.indexOf(needle, from)) {
		parts.push(buf.subarray(from, at), MASK)
		from = at + needle.length
	}
	parts.push(buf.subarray(from))
	return Buffer.concat(parts)
}

/** `res` with its body passed through `credentialScrubber` (unchanged when nothing was sent as a credential). */
export function withoutSentCredentials(res: Response, secrets: readonly string[]): Response {
	if (!secrets.length || !res.body) return res
	// The length changes with each cut: the headers keep everything else.
	const headers = new Headers(res.headers)
	headers.delete('content-length')
	return new Response(res.body.pipeThrough(credentialScrubber(secrets)), { status: res.status, statusText: res.statusText, headers })
}
