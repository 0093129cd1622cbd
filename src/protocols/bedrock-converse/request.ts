/**
 * Canonical request → the body of Bedrock's Converse and ConverseStream
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_RequestSyntax):
 * `system` blocks, `messages` (content.ts), `inferenceConfig` (maxTokens, temperature, topP, stopSequences),
 * `toolConfig` (tools as `toolSpec` with the JSON schema under `inputSchema.json`; `toolChoice` auto, any or one tool),
 * and, for reasoning and sampling settings Converse has no field for, the model family's own fields in
 * `additionalModelRequestFields` (model-fields.ts). A client's cache breakpoints (Anthropic `cache_control`) go as
 * `cachePoint` blocks after the marked system text or content, for the models that take them (family.ts); a request
 * caching its whole prompt (ChatRequest.cacheAll) with no breakpoints of its own gets them at its end (`cacheAll`).
 * Converse's answer says only that a stop sequence matched (`stopReason: "stop_sequence"`), so the matched sequence
 * stays unknown (null to clients), for it cannot be determined honestly: `additionalModelResponseFieldPaths` reads the
 * model's native answer, and of the families served here only Claude's names the sequence (`stop_sequence`; Nova's,
 * Llama's, Mistral's, DeepSeek's, Cohere's and gpt-oss's native answers give a reason alone); AWS does not say whether
 * the text keeps the sequence, so the text cannot tell which of several matched; and not even a request with one
 * sequence is filled, as AWS does not say that `stop_sequence` means only the request's sequences. Claude, whose own
 * answer says, goes over InvokeModel (providers/bedrock.ts). The model and the stream flag are in the path, not the body.
 * The channel's guardrail goes as `guardrailConfig` (UpstreamOptions.guardrail).
 * @module
 */
import { unsupportedForModel } from '../../core/errors'
import type { ChatRequest, Part, Tool } from '../../core/ir'
import type { UpstreamOptions } from '../codec'
import { jsonInstruction } from '../json-instruction'
import { refuseVendorOnly } from '../vendor-only'
import { CACHE_POINT, encodeMessages } from './content'
import { converseFamily, takesCachePoints } from './family'
import type { ConverseContentBlock, ConverseInferenceConfig, ConverseMessage, ConverseRequest, ConverseToolConfig } from './model'
import { reasoningFields, samplingFields } from './model-fields'

const hasToolBlocks = (messages: ConverseMessage[]) => messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b))

/**
 * The conversation's tool calls and results as text, for a request that offers no tools (or forbids them): Converse
 * refuses toolUse and toolResult blocks without a `toolConfig` ("The toolConfig field must be defined when using toolUse
 * and toolResult content blocks"), and tools declared just to carry the history could be called. Claude Code's summary
 * turn sends a whole tool loop so. Images and documents of a result stay blocks.
 * @example toolHistoryAsText([{ role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'ls', input: {} } }] }]) // [{ role: 'assistant', content: [{ text: '[called tool ls with {}]' }] }]
 */
export function toolHistoryAsText(messages: ConverseMessage[]): ConverseMessage[] {
	const names = new Map<string, string>()
	return messages.map((m) => ({
		role: m.role,
		content: m.content.flatMap((b): ConverseContentBlock[] => {
			if ('toolUse' in b) {
				names.set(b.toolUse.toolUseId, b.toolUse.name)
				return [{ text: `[called tool ${b.toolUse.name} with ${JSON.stringify(b.toolUse.input ?? {})}]` }]
			}
			if (!('toolResult' in b)) return [b]
			const r = b.toolResult
			const text = r.content.flatMap((c) => ('text' in c ? [c.text] : 'json' in c ? [JSON.stringify(c.json)] : [])).join('\n')
			const name = names.get(r.toolUseId) ?? r.toolUseId
			const files = r.content.flatMap((c): ConverseContentBlock[] => ('image' in c ? [{ image: c.image }] : 'document' in c ? [{ document: c.document }] : []))
			return [{ text: `[${r.status === 'error' ? 'error' : 'result'} of ${name}: ${text}]` }, ...files]
		}),
	}))
}

/**
 * `toolConfig`, or undefined. Converse has no "none" choice: the tools are left out then (and the conversation's tool
 * calls go as text: `toolHistoryAsText`).
 */
function toolConfig(req: ChatRequest): ConverseToolConfig | undefined {
	const tools = req.tools ?? []
	const choice = req.toolChoice
	if (!tools.length || choice?.type === 'none') return undefined
	// No family served here caches tool definitions (Nova: "Tools caching is not supported"): a tool's mark is left out.
	const config: ConverseToolConfig = { tools: tools.map(toolSpec) }
	if (choice?.type === 'auto') config.toolChoice = { auto: {} }
	else if (choice?.type === 'required') config.toolChoice = { any: {} }
	else if (choice?.type === 'tool') config.toolChoice = { tool: { name: choice.name } }
	return config
}

const toolSpec = (t: Tool) => ({ toolSpec: { name: t.name, ...(t.description && { description: t.description }), inputSchema: { json: t.parameters } } })

/** Whether a part is marked for caching (a tool result's blocks included). */
const marked = (p: Part | { cacheControl?: unknown }): boolean => ('cacheControl' in p && p.cacheControl !== undefined) || ('type' in p && p.type === 'tool_result' && p.content.some(marked))

/** Whether the request marks anything for caching itself (system, content or tools), wherever Converse takes the mark or not. */
const marksItsOwn = (req: ChatRequest): boolean =>
	(req.system ?? []).some(marked) || req.messages.some((m) => m.content.some(marked)) || (req.tools ?? []).some(marked)

/**
 * The whole prompt cached (ChatRequest.cacheAll), unless the request marks anything itself: a `cachePoint` after the
 * last message's last block that can precede one (not reasoning), the place Anthropic's automatic caching takes, and,
 * for the cache to be read, one where the previous turn's request put it (after the user turn before the last
 * assistant turn): Nova reads a prefix only up to a point the request names, with no look-back. Two of the four points
 * Bedrock takes; a prefix under the model's minimum is answered uncached, not refused
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html). No TTL: the families that take cache
 * points here (Nova) take none (CachePointBlock `ttl` is Claude's), so a 1-hour ask is a 5-minute write (relay/reach.ts).
 */
function cacheAll(messages: ConverseMessage[]): void {
	const point = (m: ConverseMessage | undefined) => {
		const at = m?.content.findLastIndex((b) => !('reasoningContent' in b)) ?? -1
		if (at >= 0) m?.content.splice(at + 1, 0, CACHE_POINT)
	}
	const last = messages.length - 1
	const answer = messages.findLastIndex((m, i) => i < last && m.role === 'assistant')
	if (messages[last]?.role === 'user' && answer > 0) point(messages[answer - 1])
	point(messages[last])
}

/**
 * Canonical request → Converse body. Throws GatewayError (400, retryable for another channel) for what Converse
 * cannot take: another vendor's built-in tools, a web search, audio, files it has no format for.
 * @example encodeRequest({ model: 'nova', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false }, 'us.amazon.nova-pro-v1:0')
 * // { messages: [{ role: 'user', content: [{ text: 'hi' }] }] }
 */
export function encodeRequest(req: ChatRequest, model: string, upstream?: UpstreamOptions): ConverseRequest {
	refuseVendorOnly(req, 'bedrock-converse')
	if (req.webSearch) throw unsupportedForModel(`web search is not available for model "${req.model}" over Bedrock's Converse API`, true, 'tools')
	const family = converseFamily(model, upstream?.foundationModel)
	const cache = takesCachePoints(family)
	const messages = encodeMessages(req.messages, cache)
	const body: ConverseRequest = { messages }
	const system: NonNullable<ConverseRequest['system']> = (req.system ?? [])
		.filter((p) => p.text.trim())
		.flatMap((p) => (p.cacheControl && cache ? [{ text: p.text }, CACHE_POINT] : [{ text: p.text }]))
	const json = req.responseFormat ? jsonInstruction(req.responseFormat) : undefined
	if (json) system.push({ text: json })
	if (system.length) body.system = system
	const inference: ConverseInferenceConfig = {}
	if (req.maxTokens !== undefined) inference.maxTokens = req.maxTokens
	if (req.temperature !== undefined) inference.temperature = req.temperature
	if (req.topP !== undefined) inference.topP = req.topP
	if (req.stop?.length) inference.stopSequences = req.stop
	if (Object.keys(inference).length) body.inferenceConfig = inference
	const tools = toolConfig(req)
	if (tools) body.toolConfig = tools
	else if (hasToolBlocks(messages)) body.messages = toolHistoryAsText(messages)
	if (req.cacheAll && cache && !marksItsOwn(req)) cacheAll(body.messages)
	const fields = { ...reasoningFields(family, req.reasoning), ...samplingFields(family, req) }
	if (Object.keys(fields).length) body.additionalModelRequestFields = fields
	const g = upstream?.guardrail
	// `streamProcessingMode` is GuardrailStreamConfiguration's (ConverseStream): Converse's GuardrailConfiguration has none.
	if (g)
		body.guardrailConfig = { guardrailIdentifier: g.identifier, guardrailVersion: g.version, ...(g.trace && { trace: g.trace }), ...(req.stream && g.streamMode && { streamProcessingMode: g.streamMode }) }
	return body
}
