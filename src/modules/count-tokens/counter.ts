/**
 * Token counting for every model, never billed: by the vendor where it offers counting (Anthropic
 * `/v1/messages/count_tokens`, Gemini `:countTokens`), else locally (relay/estimate.ts, the o200k tokenizer), so
 * `count_tokens` never answers 404 for a model of another vendor (WIRE-NOTES #21, vercel/ai#17326). A vendor that
 * fails with a retryable error is skipped; when none could count, the local estimate answers (counts are advisory).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import type { ChatRequest } from '../../core/ir'
import { anthropicMessages } from '../../protocols/anthropic-messages'
import { gemini } from '../../protocols/gemini'
import { ownSignaturesOnly } from '../../protocols/gemini/signatures'
import { anthropicCountTokensUrl, geminiMethodUrl } from '../../providers/native-endpoints'
import { chatAdapterFor } from '../../providers/registry'
import { upstreamError } from '../../providers/upstream-error'
import { unservedModel } from '../../relay/budget'
import { estimateInputTokens } from '../../relay/estimate'
import { mediaRuleFor } from '../../relay/image-tokens'
import { withPortableToolNames } from '../../relay/tool-names'
import { signedThinkingOnly, thinkingOffFor } from '../../relay/fast-path'
import { answerText, channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import { redactKey } from '../../routing/attempts'
import { type Channel, matchesModel } from '../../routing/catalog'
import { orderChannels } from '../../routing/select'
import type { Services } from '../../services'

/** Fields Anthropic's counter accepts; it rejects the others (`max_tokens`, `stream`…) as extra inputs. */
const ANTHROPIC_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers']

export type CountCall = {
	svc: Services
	token: AuthToken
	requestId: string
	model: string
	ir: ChatRequest
	/** The client's body when it speaks a vendor's protocol: that vendor's counter gets it as sent. */
	native?: { protocol: 'anthropic-messages' | 'gemini'; body: Record<string, unknown> }
	inbound: Headers
	signal: AbortSignal
	/** The only channel that may count: the one holding the Files API uploads the body names (modules/gemini-files/refs.ts, anthropic-files/refs.ts). */
	channelId?: number
}

export type Counted = { tokens: number; by: 'anthropic' | 'gemini' | 'estimate'; /** The vendor's answer, for clients of its protocol. */ body?: unknown }

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]))

async function post(c: CountCall, ch: Channel, url: string, headers: Record<string, string>, body: unknown): Promise<Record<string, unknown>> {
	const { res } = await fetchUpstream(url, { headers, body: JSON.stringify(body) }, channelTimeouts(ch.settings), c.signal)
	const text = await answerText(res)
	if (!res.ok) throw upstreamError(res.status, text, res.headers.get('retry-after'))
	try {
		return JSON.parse(text) as Record<string, unknown>
	} catch {
		throw new GatewayError('upstream', 'upstream sent a malformed count', { retryable: true, code: 'upstream_malformed' })
	}
}

async function byAnthropic(c: CountCall, ch: Channel, upstreamModel: string): Promise<Counted> {
	const own = c.native?.protocol === 'anthropic-messages'
	// Converted as for the answer: tool names the vendor would refuse go under ones it takes (relay/tool-names.ts).
	const full = own ? c.native!.body : (anthropicMessages.encodeRequest(withPortableToolNames(c.ir, anthropicMessages).ir, upstreamModel) as Record<string, unknown>)
	const body: Record<string, unknown> = { ...pick(full, ANTHROPIC_FIELDS), model: upstreamModel }
	// As on the fast path: thinking no Anthropic signature vouches for would make Anthropic refuse the count.
	const messages = own ? signedThinkingOnly(body.messages) : undefined
	if (messages) {
		body.messages = messages
		const off = thinkingOffFor(messages, body.thinking)
		if (off) body.thinking = off
	}
	const headers = chatAdapterFor('anthropic')!.headers(ch, own ? c.inbound : undefined)
	const out = await post(c, ch, anthropicCountTokensUrl(ch), headers, body)
	if (typeof out.input_tokens !== 'number') throw new GatewayError('upstream', 'upstream count has no input_tokens', { retryable: true })
	return { tokens: out.input_tokens, by: 'anthropic', body: out }
}

/** A Gemini client's body as Gemini may count it: what the fast path repairs in its history, repaired here too. */
function forGemini(body: Record<string, unknown>): Record<string, unknown> {
	const contents = ownSignaturesOnly(body.contents)
	return contents ? { ...body, contents } : body
}

async function byGemini(c: CountCall, ch: Channel, upstreamModel: string): Promise<Counted> {
	let body: Record<string, unknown>
	const own = c.native?.protocol === 'gemini' ? c.native.body : undefined
	if (own && !own.generateContentRequest) body = forGemini(own)
	else {
		// The generateContentRequest form counts the system instruction and tools too; it must name the model.
		const inner = own?.generateContentRequest ? forGemini(own.generateContentRequest as Record<string, unknown>) : gemini.encodeRequest(withPortableToolNames(c.ir, gemini).ir, upstreamModel)
		body = { generateContentRequest: { ...(inner as Record<string, unknown>), model: `models/${upstreamModel}` } }
	}
	const out = await post(c, ch, geminiMethodUrl(ch, upstreamModel, 'countTokens'), chatAdapterFor('gemini')!.headers(ch), body)
	if (typeof out.totalTokens !== 'number') throw new GatewayError('upstream', 'upstream count has no totalTokens', { retryable: true })
	return { tokens: out.totalTokens, by: 'gemini', body: out }
}

/**
 * Counts the prompt of `c.ir` for `c.model`. Throws 403 for a model the key may not use, 404 for an unserved one
 * (503 when its channels are all disabled).
 */
export async function countTokens(c: CountCall): Promise<Counted> {
	const { svc, token, model } = c
	if (token.allowedModels && !matchesModel(token.allowedModels, model))
		throw new GatewayError('permission', `This API key may not use model "${model}"`, { code: 'model_not_allowed' })
	const served = svc.catalog.channelsFor(model)
	if (!served.length) throw unservedModel(svc, model)
	const channels = c.channelId === undefined ? served : served.filter((ch) => ch.id === c.channelId)
	if (!channels.length) throw new GatewayError('invalid_request', `A file this request names is held by a channel that does not serve the model "${model}"; only that channel's vendor key can read it`, { code: 'unsupported_for_model' })
	const ordered = orderChannels(channels)
	// Counted here, images and pages count as the vendor of the first channel that would serve (image-tokens.ts).
	let serving = ordered[0]!
	for (const ch of ordered.slice(0, 1 + svc.env.retries)) {
		const counter = ch.type === 'anthropic' ? byAnthropic : ch.type === 'gemini' ? byGemini : undefined
		if (!counter) {
			serving = ch
			break // this vendor has no counting endpoint: count here
		}
		try {
			return await counter(c, ch, ch.modelMap[model] ?? model)
		} catch (e) {
			const err = e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true })
			if (!err.retryable || c.signal.aborted) throw err
			svc.log.warn('token count failed upstream', { request_id: c.requestId, channel: ch.name, status: err.status, error: err.message, detail: err.detail && redactKey(err.detail, ch.apiKey) })
		}
	}
	return { tokens: estimateInputTokens(c.ir, mediaRuleFor([{ type: serving.type, model: serving.modelMap[model] ?? model }], c.ir)), by: 'estimate' }
}
