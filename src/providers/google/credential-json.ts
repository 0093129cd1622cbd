/**
 * What every kind of Google credentials JSON a Vertex AI channel takes has in common (service-account.ts,
 * authorized-user.ts, external-account.ts; credentials.ts picks one by `type`): the scope their tokens are asked for,
 * the credential's shape as vertex.ts uses it, and the readers of their fields, whose refusals name the field and never
 * quote its value.
 * @module
 */
import { GatewayError } from '../../core/errors'

/** The scope of every Vertex AI call (https://cloud.google.com/vertex-ai/docs/reference/rest). */
export const VERTEX_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

/** Google's OAuth 2.0 token endpoint, where a key file names none (`token_uri`). */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token'

/** A channel key that is a Google credentials JSON, ready to give bearer tokens. */
export type GoogleCredential = {
	/** What the key is, in messages: `the service-account key`. */
	readonly kind: string
	/** The project the key names, and the field it came from (said when there is none). */
	readonly projectId?: string
	readonly projectField: string
	/**
	 * The project Google charges quota and billing to, sent as `x-goog-user-project`: user credentials have no project
	 * of their own (https://cloud.google.com/docs/authentication/troubleshoot-adc#user-creds-client-based).
	 */
	readonly quotaProject?: string
	/** The key's member naming a file on the gateway's host that each token fetch reads (`credential_source.file`), if any. */
	readonly hostFile?: string
	/**
	 * A workload's federated token (external_account, directly or as an impersonation's source): where its subject token
	 * comes from (`host`: the gateway's AWS role, a file or a command of its host; else the URL read) and, by the key's
	 * field, every URL the tokens made from it are sent to (channel-key.ts keeps the host's identity to Google's hosts).
	 */
	readonly federation?: Federation
	/** The channel's bearer token: cached while fresh, else one fetch shared by the calls waiting (cached-token.ts). */
	token(channelId: number, channelKey: string, signal?: AbortSignal): Promise<string>
	/** Forgets the channel's token when it is `token` (Vertex refused it); true when a call made again may get another. */
	drop(channelId: number, token: string): boolean
	/** What parsing cannot tell, checked when the key is saved (a service account's private key imports). */
	check?(): Promise<void>
}

export type Federation = { source: 'host' | { url: string }; sends: { field: string; url: string }[] }

/** The channel's key is wrong: said as the channel's misconfiguration, never with the key's contents. */
export const misconfigured = (why: string) => new GatewayError('unavailable', `vertex channel key: ${why}`, { retryable: true, code: 'channel_misconfigured' })

/** `o[field]` when it is a non-empty string. */
export const optionalString = (o: Record<string, unknown>, field: string): string | undefined => (typeof o[field] === 'string' && o[field] ? (o[field] as string) : undefined)

/**
 * `o[field]`, a non-empty string, or a refusal naming the field (as `path` within the key) and what the key is.
 * @example requiredString(o, 'refresh_token', 'an authorized_user key') // throws "an authorized_user key needs `refresh_token`" when missing
 */
export function requiredString(o: Record<string, unknown>, field: string, what: string, path = field): string {
	const v = optionalString(o, field)
	if (v === undefined) throw misconfigured(`${what} needs \`${path}\``)
	return v
}

/**
 * `o[field]` as an http(s) URL, the default when absent; a refusal naming the field when it is not one.
 * @example urlField(o, 'token_uri', GOOGLE_TOKEN_URI) // 'https://oauth2.googleapis.com/token'
 */
export function urlField(o: Record<string, unknown>, field: string, fallback: string | undefined, path = field): string | undefined {
	const v = o[field]
	if (v === undefined || v === null || v === '') return fallback
	let url: URL | undefined
	try {
		url = typeof v === 'string' ? new URL(v) : undefined
	} catch {
		url = undefined
	}
	if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw misconfigured(`\`${path}\` must be an http(s) URL`)
	return v as string
}

/** `o[field]` when it is a JSON object, undefined when absent; a refusal naming the field when it is something else. */
export function objectField(o: Record<string, unknown>, field: string, path = field): Record<string, unknown> | undefined {
	const v = o[field]
	if (v === undefined || v === null) return undefined
	if (typeof v !== 'object' || Array.isArray(v)) throw misconfigured(`\`${path}\` must be a JSON object`)
	return v as Record<string, unknown>
}
