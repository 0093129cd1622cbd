/**
 * Anthropic's betas on the clouds that serve Claude (Bedrock InvokeModel, Vertex AI rawPredict). A client of Anthropic's
 * own API (Claude Code, the SDKs, opencode…) names betas those platforms do not take, and they refuse the whole request
 * for one of them: Bedrock with 400 "invalid beta flag" (naming none), Vertex with 400 "Unexpected value(s) `a`, `b` for
 * the `anthropic-beta` header" (naming them). Which betas a platform takes differs by model and by endpoint and changes
 * as the platforms add them, so the gateway sends what the client asked for and learns from a refusal:
 * - Vertex: the values it names are dropped and the call made again at once; later calls to that endpoint of the
 *   channel leave them out from the start.
 * - Bedrock: the betas outside those AWS documents for InvokeModel are dropped and the call made again; if it still
 *   refuses (a model that takes no beta at all), none is sent. Later calls to that endpoint start from what worked.
 * - Tool search has another name on both clouds (Anthropic's `advanced-tool-use-2025-11-20` is
 *   `tool-search-tool-2025-10-19` there: platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool), sent so
 *   from the start.
 * What was learnt is per instance, channel (and its base URL) and endpoint (model and method), kept until the process ends.
 * @module
 */
import type { Channel } from '../routing/catalog'

/** The betas AWS documents for Claude over InvokeModel (`anthropic_beta`, docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html). */
const BEDROCK_DOCUMENTED: ReadonlySet<string> = new Set([
	'computer-use-2024-10-22',
	'computer-use-2025-01-24',
	'computer-use-2025-11-24',
	'token-efficient-tools-2025-02-19',
	'interleaved-thinking-2025-05-14',
	'output-128k-2025-02-19',
	'dev-full-thinking-2025-05-14',
	'context-1m-2025-08-07',
	'context-management-2025-06-27',
	'effort-2025-11-24',
	'tool-search-tool-2025-10-19',
	'tool-examples-2025-10-29',
	'compact-2026-01-12',
])

/** Anthropic's names of a beta the clouds know by another. */
const CLOUD_NAMES: Readonly<Record<string, string>> = { 'advanced-tool-use-2025-11-20': 'tool-search-tool-2025-10-19' }

/** What an endpoint refused: the values it named (Vertex), only AWS's documented ones (Bedrock), or every beta. */
type Learnt = { drop: ReadonlySet<string> } | 'documented' | 'none'

const learnt = new Map<string, Learnt>()
/** Endpoints are a channel's models times a few methods: bounded anyway, against a client naming endless models. */
const MAX_LEARNT = 10_000

/**
 * An endpoint: its model and method, the URL from `/model…` on (Bedrock's `/model/{id}/invoke`, Vertex's
 * `…/models/{id}:rawPredict`), the same before and after a Vertex project is filled in from the metadata server.
 */
const keyOf = (ch: Endpoint, url: string) => `${ch.id} ${ch.baseUrl} ${url.slice(Math.max(0, url.lastIndexOf('/model')))}`

/** The channel an endpoint is on: its id, and its base URL (another base URL is another cloud's account or region). */
type Endpoint = Pick<Channel, 'id' | 'baseUrl'>

/** The comma-separated betas of a header (or the items of a body's `anthropic_beta`), each once, in the clouds' names. */
export function cloudBetas(values: readonly string[]): string[] {
	const out: string[] = []
	for (const v of values) {
		const b = CLOUD_NAMES[v.trim()] ?? v.trim()
		if (b && !out.includes(b)) out.push(b)
	}
	return out
}

export const splitBetas = (header: string): string[] => header.split(',')

/** `betas` without what the endpoint refused before. */
export function withoutRefused(ch: Endpoint, url: string, betas: string[]): string[] {
	const l = learnt.get(keyOf(ch, url))
	if (!l) return betas
	if (l === 'none') return []
	if (l === 'documented') return betas.filter((b) => BEDROCK_DOCUMENTED.has(b))
	return betas.filter((b) => !l.drop.has(b))
}

function remember(ch: Endpoint, url: string, l: Learnt) {
	if (learnt.size >= MAX_LEARNT) learnt.clear()
	learnt.set(keyOf(ch, url), l)
}

/** The values a Vertex refusal names: "Unexpected value(s) `a`, `b` for the `anthropic-beta` header". */
export function vertexRefused(message: string): string[] {
	const m = /Unexpected value\(s\) (.*?) for the `anthropic-beta` header/.exec(message)
	return m ? [...m[1]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!) : []
}

/**
 * After Vertex's 400: the betas to send instead (the named ones dropped, remembered for the endpoint), or undefined
 * when the refusal was not of betas `sent` holds.
 */
export function afterVertexRefusal(ch: Endpoint, url: string, sent: string[], message: string): string[] | undefined {
	const named = vertexRefused(message).filter((b) => sent.includes(b))
	if (named.length === 0) return undefined
	const prev = learnt.get(keyOf(ch, url))
	const drop = new Set([...(prev && typeof prev === 'object' ? prev.drop : []), ...named])
	remember(ch, url, { drop })
	return sent.filter((b) => !drop.has(b))
}

/**
 * The betas for Bedrock's CountTokens, whose body wraps InvokeModel's: in Bedrock's names, AWS's documented ones only
 * (a refused count falls back to an estimate, so it is not retried to learn).
 */
export const bedrockCountBetas = (values: readonly string[]): string[] => cloudBetas(values).filter((b) => BEDROCK_DOCUMENTED.has(b))

/** Bedrock's refusal of a beta ("invalid beta flag", whichever it was). */
export const bedrockRefusedBeta = (message: string): boolean => /invalid beta flag/i.test(message)

/**
 * After Bedrock's "invalid beta flag": the betas to send instead (AWS's documented ones, or none when only those were
 * sent), remembered for the endpoint; undefined when none was sent.
 */
export function afterBedrockRefusal(ch: Endpoint, url: string, sent: string[]): string[] | undefined {
	if (sent.length === 0) return undefined
	const documented = sent.filter((b) => BEDROCK_DOCUMENTED.has(b))
	if (documented.length < sent.length) {
		remember(ch, url, 'documented')
		return documented
	}
	remember(ch, url, 'none')
	return []
}

/** The beta that lets a `system` message stand mid-conversation (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages). */
const MID_CONVERSATION_SYSTEM = 'mid-conversation-system-2026-04-07'

type TextBlock = { type: 'text'; text: string } & Record<string, unknown>
const asBlocks = (content: unknown): TextBlock[] =>
	typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as TextBlock[]).filter((b) => b?.type === 'text') : []

/**
 * A body going without the mid-conversation system beta (the cloud refused it, or the client never named it) has its
 * `system` messages (Claude Code sends one after its first user turn) moved, in order, to the end of the system prompt,
 * where every platform takes them, as the gateway does for other vendors (protocols/anthropic-messages/request.ts).
 * Returns whether it changed `body`.
 */
export function foldSystemMessages(body: Record<string, unknown>, betas: readonly string[]): boolean {
	const messages = body.messages
	if (!Array.isArray(messages) || betas.includes(MID_CONVERSATION_SYSTEM) || !messages.some((m) => m?.role === 'system')) return false
	const system = body.system === undefined ? [] : asBlocks(body.system)
	body.messages = messages.filter((m) => {
		if (m?.role !== 'system') return true
		system.push(...asBlocks(m.content))
		return false
	})
	body.system = system
	return true
}
