/**
 * Token counting for every model, never billed: by the vendor where it offers counting (Anthropic
 * `/v1/messages/count_tokens`, Gemini `:countTokens`, on Vertex AI Gemini's `:countTokens` and Claude's
 * `count-tokens:rawPredict`, on Amazon Bedrock Claude's CountTokens), else locally (relay/estimate.ts, the o200k
 * tokenizer), so `count_tokens` never answers 404 for a model of another vendor (WIRE-NOTES #21, vercel/ai#17326). A
 * vendor that fails with a retryable error is skipped; when none could count, the local estimate answers (counts are
 * advisory). Vertex and Bedrock are skipped whatever they answer: their Claude counters serve some regions and models
 * only, so a refusal says nothing of the request. A request naming MCP servers the gateway would connect to is counted
 * as round 1's prompt, with their tools (src/mcp/prepare.ts): Anthropic bills tool definitions as input, MCP ones too.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import type { ChatRequest } from '../../core/ir'
import { anthropicMessages } from '../../protocols/anthropic-messages'
import { gemini } from '../../protocols/gemini'
import { ownSignaturesOnly } from '../../protocols/gemini/signatures'
import { anthropicCountTokensUrl, geminiMethodUrl } from '../../providers/native-endpoints'
import { type CallVia, channelHeaders } from '../../providers/adapter'
import { dropAttributionLine } from '../../providers/attribution-line'
import { BEDROCK_VERSION, bedrockCountHooks, countTokensModel, countTokensUrl } from '../../providers/bedrock'
import { bedrockCountBetas, splitBetas } from '../../providers/platform-betas'
import { adaptersReady, chatAdapterFor } from '../../providers/registry'
import { isClaudeModel, vertexClaudeCountAdapter, vertexClaudeCountUrl, vertexGeminiAdapter, vertexGoogleUrl } from '../../providers/vertex'
import { upstreamError } from '../../providers/upstream-error'
import { defaultOutputCap } from '../../core/reasoning'
import { unservedModel } from '../../relay/budget'
import { estimateInputTokens } from '../../relay/estimate'
import { mediaRuleFor } from '../../relay/image-tokens'
import { withPortableToolNames } from '../../relay/tool-names'
import { prepareMcp, runsMcpOn } from '../../mcp/prepare'
import { parseMcp, wantsMcp } from '../../mcp/request'
import { claudeTakes, thinkingOffFor } from '../../relay/fast-path'
import { answerText, channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import { redactKey } from '../../routing/attempts'
import { type Channel, matchesModel } from '../../routing/catalog'
import { holdersOf, orderChannels } from '../../routing/select'
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
	/**
	 * The client's request, for the MCP servers it names (`mcp_servers`, toolsets: src/mcp/request.ts): where the
	 * gateway would connect to them, the count is of round 1's prompt, with their tools (src/mcp/prepare.ts).
	 */
	mcp?: { client: 'anthropic-messages' | 'openai-responses'; body: Record<string, unknown>; beta: string | null }
}

export type Counted = {
	tokens: number
	by: 'anthropic' | 'gemini' | 'vertex' | 'bedrock' | 'estimate'
	/** The vendor's answer, for clients of its protocol (`protocol`). */
	body?: unknown
	protocol?: 'anthropic-messages' | 'gemini'
}

const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]))

async function post(c: CountCall, ch: Channel, url: string, headers: Record<string, string>, body: unknown, via?: CallVia): Promise<Record<string, unknown>> {
	const up = await fetchUpstream(url, { headers, body: JSON.stringify(body), ...via }, channelTimeouts(ch.settings), c.signal)
	const { res } = up
	const text = await answerText(up)
	if (!res.ok) throw upstreamError(res.status, text, res.headers)
	try {
		return JSON.parse(text) as Record<string, unknown>
	} catch {
		throw new GatewayError('upstream', 'upstream sent a malformed count', { retryable: true, code: 'upstream_malformed' })
	}
}

/** The body Anthropic's counter takes, for the client's request: its own when it speaks Anthropic's protocol, else converted. */
function anthropicCountBody(c: CountCall, upstreamModel: string): Record<string, unknown> {
	const own = c.native?.protocol === 'anthropic-messages'
	// Converted as for the answer: tool names the vendor would refuse go under ones it takes (relay/tool-names.ts).
	const full = own ? c.native!.body : (anthropicMessages.encodeRequest(withPortableToolNames(c.ir, anthropicMessages).ir, upstreamModel) as Record<string, unknown>)
	const body: Record<string, unknown> = { ...pick(full, ANTHROPIC_FIELDS), model: upstreamModel }
	// As on the fast path: thinking no Anthropic signature vouches for, or whitespace-only text, would make Anthropic refuse the count.
	const messages = own ? claudeTakes(body.messages) : undefined
	if (messages) {
		body.messages = messages
		const off = thinkingOffFor(messages, body.thinking)
		if (off) body.thinking = off
	}
	return body
}

const inputTokensOf = (out: Record<string, unknown>): number => {
	if (typeof out.input_tokens !== 'number') throw new GatewayError('upstream', 'upstream count has no input_tokens', { retryable: true })
	return out.input_tokens
}

async function byAnthropic(c: CountCall, ch: Channel, upstreamModel: string): Promise<Counted> {
	const headers = chatAdapterFor('anthropic')!.headers(ch, c.native?.protocol === 'anthropic-messages' ? c.inbound : undefined)
	const out = await post(c, ch, anthropicCountTokensUrl(ch), headers, anthropicCountBody(c, upstreamModel))
	return { tokens: inputTokensOf(out), by: 'anthropic', body: out, protocol: 'anthropic-messages' }
}

/** A Gemini client's body as Gemini may count it: what the fast path repairs in its history, repaired here too. */
function forGemini(body: Record<string, unknown>): Record<string, unknown> {
	const contents = ownSignaturesOnly(body.contents)
	return contents ? { ...body, contents } : body
}

/**
 * What Gemini should count: the client's `contents` alone (`plain`), else a whole request (with its system
 * instruction and tools): the client's `generateContentRequest`, or the request converted.
 */
function geminiCountInput(c: CountCall, upstreamModel: string): { plain: Record<string, unknown> } | { whole: Record<string, unknown> } {
	const own = c.native?.protocol === 'gemini' ? c.native.body : undefined
	if (own && !own.generateContentRequest) return { plain: forGemini(own) }
	const inner = own?.generateContentRequest ? forGemini(own.generateContentRequest as Record<string, unknown>) : gemini.encodeRequest(withPortableToolNames(c.ir, gemini).ir, upstreamModel)
	return { whole: inner as Record<string, unknown> }
}

const totalTokensOf = (out: Record<string, unknown>): number => {
	if (typeof out.totalTokens !== 'number') throw new GatewayError('upstream', 'upstream count has no totalTokens', { retryable: true })
	return out.totalTokens
}

async function byGemini(c: CountCall, ch: Channel, upstreamModel: string): Promise<Counted> {
	const input = geminiCountInput(c, upstreamModel)
	// The generateContentRequest form counts the system instruction and tools too; it must name the model.
	const body = 'plain' in input ? input.plain : { generateContentRequest: { ...input.whole, model: `models/${upstreamModel}` } }
	const out = await post(c, ch, geminiMethodUrl(ch, upstreamModel, 'countTokens'), chatAdapterFor('gemini')!.headers(ch), body)
	return { tokens: totalTokensOf(out), by: 'gemini', body: out, protocol: 'gemini' }
}

/** Members of a request Vertex's `:countTokens` takes at the top level (it has no `generateContentRequest`). */
const VERTEX_GEMINI_FIELDS = ['contents', 'systemInstruction', 'tools', 'generationConfig']

/**
 * Vertex AI: Claude's `count-tokens:rawPredict` (Anthropic's body, the model in it) or Gemini's `:countTokens`, whose
 * request has the contents, system instruction, tools and generation config at the top level
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.publishers.models/countTokens).
 */
async function byVertex(c: CountCall, ch: Channel, upstreamModel: string): Promise<Counted> {
	if (isClaudeModel(upstreamModel)) {
		const headers = vertexClaudeCountAdapter.headers(ch, c.native?.protocol === 'anthropic-messages' ? c.inbound : undefined)
		// Vertex has no MCP connector: its counter would refuse `mcp_servers`, which the gateway runs and counts itself (mcpPrompt).
		const { mcp_servers: _mcp, ...body } = anthropicCountBody(c, upstreamModel)
		const out = await post(c, ch, vertexClaudeCountUrl(ch), headers, body, { ch, adapter: vertexClaudeCountAdapter })
		return { tokens: inputTokensOf(out), by: 'vertex', body: out, protocol: 'anthropic-messages' }
	}
	const input = geminiCountInput(c, upstreamModel)
	const body = 'plain' in input ? { contents: input.plain.contents ?? [] } : pick(input.whole, VERTEX_GEMINI_FIELDS)
	const out = await post(c, ch, vertexGoogleUrl(ch, upstreamModel, 'countTokens'), vertexGeminiAdapter.headers(ch), body, { ch, adapter: vertexGeminiAdapter })
	return { tokens: totalTokensOf(out), by: 'vertex', body: out, protocol: 'gemini' }
}

/**
 * Amazon Bedrock's CountTokens (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html)
 * for Claude: `{"input": {"invokeModel": {"body": …}}}`, the body InvokeModel would take (Anthropic's, without `model`,
 * with `anthropic_version` and `max_tokens`, the betas in `anthropic_beta`) as base64, the foundation model's id in
 * the path; it answers `{"inputTokens": n}`.
 */
async function byBedrock(c: CountCall, ch: Channel, upstreamModel: string): Promise<Counted> {
	const model = countTokensModel(ch, upstreamModel)!
	// Bedrock has no MCP connector: its counter would refuse `mcp_servers`, which the gateway runs and counts itself (mcpPrompt).
	const { model: _model, mcp_servers: _mcp, ...anthropic } = anthropicCountBody(c, model)
	const betas = c.native?.protocol === 'anthropic-messages' ? bedrockCountBetas(splitBetas(c.inbound.get('anthropic-beta') ?? '')) : []
	const invoke = { anthropic_version: BEDROCK_VERSION, max_tokens: c.ir.maxTokens ?? defaultOutputCap(c.ir.reasoning), ...anthropic, ...(betas.length && { anthropic_beta: betas }) }
	dropAttributionLine(invoke)
	const body = { input: { invokeModel: { body: Buffer.from(JSON.stringify(invoke)).toString('base64') } } }
	const headers = { 'content-type': 'application/json', accept: 'application/json', ...channelHeaders(ch) }
	const out = await post(c, ch, countTokensUrl(ch, model), headers, body, { ch, adapter: bedrockCountHooks })
	if (typeof out.inputTokens !== 'number') throw new GatewayError('upstream', 'upstream count has no inputTokens', { retryable: true })
	return { tokens: out.inputTokens, by: 'bedrock' }
}

type Counter = (c: CountCall, ch: Channel, upstreamModel: string) => Promise<Counted>

const COUNTERS: Partial<Record<Channel['type'], Counter>> = { anthropic: byAnthropic, gemini: byGemini, vertex: byVertex, bedrock: byBedrock }

/** The vendor's counter for the model, if it has one: Bedrock's counts Claude's models only. */
function counterFor(ch: Channel, upstreamModel: string): Counter | undefined {
	if (ch.type === 'bedrock' && !countTokensModel(ch, upstreamModel)) return undefined
	return COUNTERS[ch.type]
}

/** Vendors whose refusal (a region or model their counter does not serve) leaves the count to the next channel or the estimate. */
const REFUSAL_FALLS_BACK = new Set<Channel['type']>(['vertex', 'bedrock'])

/**
 * Round 1's prompt of an MCP request, as the gateway would send it on `ch`, or undefined where it would not connect to
 * the servers (an Anthropic client on Anthropic's own connector, which counts `mcp_servers` itself), unless the count
 * is the local estimate (`ch` undefined), which counts the tools the model sees whoever serves them. The servers are
 * listed once per count, as the request would list them (its filters; a server it cannot reach as the error the model
 * would read), and the sessions end at once.
 * @throws GatewayError('invalid_request') for a bad MCP entry, worded as the request's 400
 */
function mcpPrompt(c: CountCall): (ch: Channel | undefined) => Promise<ChatRequest> | undefined {
	let listed: Promise<ChatRequest> | undefined
	const list = async (terms: NonNullable<CountCall['mcp']>) => {
		const mcp = await prepareMcp(parseMcp(terms.body, terms.beta), c.ir, c.svc.env, c.signal)
		mcp.close()
		return mcp.first
	}
	return (ch) => {
		const terms = c.mcp
		if (!terms || !wantsMcp(terms.body) || (ch && !runsMcpOn(terms.client, ch, c.ir))) return undefined
		return (listed ??= list(terms))
	}
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
	// The same channels as generateContent reads the named files on (relay/chat.ts): the holder, or its key's other channels.
	const channels = c.channelId === undefined ? served : holdersOf(served, c.channelId, svc.catalog.channels())
	if (!channels.length) throw new GatewayError('invalid_request', `A file this request names is held by a channel that does not serve the model "${model}"; only that channel's vendor key can read it`, { code: 'unsupported_for_model' })
	// A Bedrock application inference profile's model, asked of Bedrock when the channel does not say it: Claude's are counted by Bedrock.
	const ready = adaptersReady(channels, model, svc.log)
	if (ready) await ready
	const ordered = orderChannels(channels)
	// Counted here, images and pages count as the vendor of the first channel that would serve (image-tokens.ts).
	let serving = ordered[0]!
	const mcpOn = mcpPrompt(c)
	for (const ch of ordered.slice(0, 1 + svc.env.retries)) {
		const upstreamModel = ch.modelMap[model] ?? model
		const counter = counterFor(ch, upstreamModel)
		if (!counter) {
			serving = ch
			break // this vendor has no counting endpoint: count here
		}
		// With the MCP tools the gateway would offer, the request is counted converted, as it would be sent.
		const prompt = await mcpOn(ch)
		try {
			return await counter(prompt ? { ...c, ir: prompt, native: undefined } : c, ch, upstreamModel)
		} catch (e) {
			const err = e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true })
			if ((!err.retryable && !REFUSAL_FALLS_BACK.has(ch.type)) || c.signal.aborted) throw err
			svc.log.warn('token count failed upstream', { request_id: c.requestId, channel: ch.name, status: err.status, error: err.message, detail: err.detail && redactKey(err.detail, ch.apiKey) })
		}
	}
	const ir = (await mcpOn(undefined)) ?? c.ir
	return { tokens: estimateInputTokens(ir, mediaRuleFor([{ type: serving.type, model: serving.modelMap[model] ?? model }], ir)), by: 'estimate' }
}
