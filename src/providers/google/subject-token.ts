/**
 * The subject token of workload identity federation (external-account.ts): the workload's own credential from its
 * identity provider, read afresh for each exchange from the `credential_source` of the credential configuration
 * (https://google.aip.dev/auth/4117): a file (a Kubernetes projected service account token, a file an agent rotates) or
 * a URL (Azure's instance metadata service, a GitHub Actions OIDC endpoint) with its `headers`, whose content is the
 * token (`format.type` `text`, the default) or a JSON object holding it (`json`, `subject_token_field_name`).
 * The URL is the operator's, not a client's: the client-URL SSRF guard does not apply (a metadata service is a
 * link-local address), but no redirect to another host is followed, and the answer is bounded in size and time. A token
 * is one line of visible characters (a JWT, a base64 SAML assertion): anything else read is not sent anywhere.
 * A key given through the management API whose tokens go off Google's hosts (credentials.ts `publicOnly`) reads its URL
 * from a public address only, the one checked (safe-fetch.ts): its name, public when the key was saved, may have been
 * pointed at the metadata service or loopback since, whose token would then go to the key's foreign endpoint.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { checkHost, pinned } from '../../lib/safe-fetch'
import { misconfigured, objectField, optionalString, urlField } from './credential-json'

export type SubjectSource = { file?: string; url?: string; headers: Record<string, string>; field?: string }

/** Far above a JWT or a SAML assertion; a bigger file or answer is not a token. */
const MAX_BYTES = 64 * 1024
/** An identity provider's token endpoint on the workload's own network answers in well under this. */
const URL_TIMEOUT_MS = 10_000
const MAX_REDIRECTS = 3
const TOKEN = /^[\x21-\x7e]+$/

/**
 * The `credential_source` of an external_account key that is a file or a URL (credential-source.ts has ruled out the
 * others), and the token's format.
 */
export function subjectSourceOf(cs: Record<string, unknown>): SubjectSource {
	const file = optionalString(cs, 'file')
	const url = urlField(cs, 'url', undefined, 'credential_source.url')
	if (!file === !url) throw misconfigured('`credential_source` needs one of `file` or `url`')
	const headers = objectField(cs, 'headers', 'credential_source.headers') ?? {}
	if (Object.values(headers).some((v) => typeof v !== 'string')) throw misconfigured('`credential_source.headers` must map header names to strings')
	const format = objectField(cs, 'format', 'credential_source.format') ?? {}
	const type = format.type ?? 'text'
	if (type !== 'text' && type !== 'json') throw misconfigured('`credential_source.format.type` must be "text" or "json"')
	const field = optionalString(format, 'subject_token_field_name')
	if (type === 'json' && !field) throw misconfigured('`credential_source.format.subject_token_field_name` must name the token\'s field when `format.type` is "json"')
	return { file, url, headers: headers as Record<string, string>, field: type === 'json' ? field : undefined }
}

/** The source, in details: the file's path or the URL without its query (where a provider's parameters go) or user. */
export const sourceName = (src: SubjectSource) => (src.file ? `subject token file ${src.file}` : `subject token URL ${src.url!.replace(/[?#].*$/, '').replace(/\/\/[^/]*@/, '//')}`)

/** The workload has no usable token: the channel's failure, disabled with why (`detail`). */
const refused = (src: SubjectSource, why: string) =>
	new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail: `external_account ${sourceName(src)}: ${why}` })

/**
 * The subject token, read now; `publicOnly`: why the URL may be read from a public address only. Throws GatewayError:
 * `upstream_auth` (the channel disabled with why) when the source has none (a file that cannot be read, a 4xx, an
 * answer that is no token, a URL refused for its address); a retryable upstream error when a URL does not answer or
 * fails (5xx, 429).
 */
export async function readSubjectToken(src: SubjectSource, publicOnly?: string): Promise<string> {
	const text = src.file ? await readFile(src) : await readUrl(src, publicOnly)
	let token: unknown = text.trim()
	if (src.field) {
		try {
			token = (JSON.parse(text) as Record<string, unknown>)[src.field]
		} catch {
			throw refused(src, 'not JSON, though `format.type` is "json"')
		}
		if (typeof token !== 'string') throw refused(src, `no string \`${src.field}\` in the JSON`)
		token = token.trim()
	}
	if (!TOKEN.test(token as string)) throw refused(src, 'not a token (one line of visible characters)')
	return token as string
}

async function readFile(src: SubjectSource): Promise<string> {
	const file = Bun.file(src.file!)
	try {
		if (file.size > MAX_BYTES) throw refused(src, `larger than ${MAX_BYTES} bytes: not a token`)
		return await file.text()
	} catch (e) {
		if (e instanceof GatewayError) throw e
		throw refused(src, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`)
	}
}

async function readUrl(src: SubjectSource, publicOnly?: string): Promise<string> {
	let url = new URL(src.url!)
	const deadline = AbortSignal.timeout(URL_TIMEOUT_MS)
	for (let hop = 0; ; hop++) {
		let res: Response
		try {
			const { target, init } = publicOnly ? pinned(url, await publicAddress(url, src, publicOnly, deadline)) : { target: url, init: {} }
			res = await fetch(target, { ...init, headers: { ...src.headers, ...Object.fromEntries(new Headers(init.headers)) }, signal: deadline, redirect: 'manual' })
		} catch (e) {
			if (e instanceof GatewayError && e.code === 'upstream_auth') throw e
			const why = e instanceof DOMException && e.name === 'TimeoutError' ? `no answer within ${URL_TIMEOUT_MS} ms` : ((e as Error).message ?? String(e))
			throw new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: `external_account ${sourceName(src)} is unreachable (${why})` })
		}
		const location = res.headers.get('location')
		if (res.status >= 300 && res.status < 400 && location) {
			await res.body?.cancel()
			const next = new URL(location, url)
			// A redirect elsewhere would send the source's headers (often a credential) to a host the operator did not name.
			if (next.origin !== url.origin) throw refused(src, `redirects to another host (${next.origin}), which is not followed`)
			if (hop >= MAX_REDIRECTS) throw refused(src, `more than ${MAX_REDIRECTS} redirects`)
			url = next
			continue
		}
		if (res.status === 429 || res.status >= 500) {
			await res.body?.cancel()
			throw new GatewayError('upstream', `the upstream provider failed (HTTP ${res.status})`, { retryable: true, code: 'upstream_error', detail: `external_account ${sourceName(src)} answered HTTP ${res.status}` })
		}
		// The body of a refusal is not repeated: it may hold what the provider was sent.
		if (!res.ok) {
			await res.body?.cancel()
			throw refused(src, `answered HTTP ${res.status}`)
		}
		return boundedText(res, src)
	}
}

/**
 * The address to read `url` from, every address its name has being public (no FETCH_ALLOW: that is for clients' URLs);
 * `upstream_auth` saying why otherwise, or when the name does not resolve.
 */
async function publicAddress(url: URL, src: SubjectSource, why: string, signal: AbortSignal): Promise<string> {
	try {
		return await checkHost(url, { allow: [] }, signal)
	} catch (e) {
		// Else the deadline, said as the source not answering.
		if ((e as GatewayError).code !== 'url_blocked' && (e as GatewayError).code !== 'url_unresolvable') throw e
		const what = (e as GatewayError).code === 'url_blocked' ? 'resolves to a private, loopback or link-local address (the host\'s own, as a metadata service)' : 'does not resolve'
		throw refused(src, `${what}, and is read from a public address only: ${why}`)
	}
}

/** The body, refused past MAX_BYTES without reading the rest; a body cut off (or past the deadline) as the source unreachable. */
async function boundedText(res: Response, src: SubjectSource): Promise<string> {
	if (!res.body) return ''
	const reader = res.body.getReader()
	const chunks: Uint8Array[] = []
	let size = 0
	try {
		for (let r = await reader.read(); !r.done; r = await reader.read()) {
			size += r.value.byteLength
			if (size > MAX_BYTES) break
			chunks.push(r.value)
		}
	} catch (e) {
		throw new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: `external_account ${sourceName(src)} broke off its answer (${(e as Error).message ?? e})` })
	}
	if (size > MAX_BYTES) {
		await reader.cancel().catch(() => {})
		throw refused(src, `answered more than ${MAX_BYTES} bytes: not a token`)
	}
	return Buffer.concat(chunks).toString('utf8')
}
