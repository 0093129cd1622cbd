/**
 * Canonical request → the body of Bedrock's Converse and ConverseStream
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_RequestSyntax):
 * `system` blocks, `messages` (content.ts), `inferenceConfig` (maxTokens, temperature, topP, stopSequences),
 * `toolConfig` (tools as `toolSpec` with the JSON schema under `inputSchema.json`; `toolChoice` auto, any or one tool),
 * and, for reasoning and sampling settings Converse has no field for, the model family's own fields in
 * `additionalModelRequestFields` (model-fields.ts). A client's cache breakpoints (Anthropic `cache_control`) go as
 * `cachePoint` blocks after the marked system text, content or tool, for the models that take them (family.ts).
 * Converse's answer says only that a stop sequence matched: for Claude, whose own answer says which, its
 * `stop_sequence` is asked back through `additionalModelResponseFieldPaths`; other families document no such field,
 * so their matched sequence stays unknown (null to clients). The model and the stream flag are in the path, not the body.
 * The channel's guardrail goes as `guardrailConfig` (UpstreamOptions.guardrail).
 * @module
 */
import { unsupportedForModel } from '../../core/errors'
import type { ChatRequest, Tool } from '../../core/ir'
import { claudeFixedSampling } from '../../routing/claude-models'
import type { UpstreamOptions } from '../codec'
import { jsonInstruction } from '../json-instruction'
import { refuseVendorOnly } from '../vendor-only'
import { type CachePoints, cachePoint, encodeMessages } from './content'
import { cachePointsIn, converseFamily } from './family'
import type { ConverseContentBlock, ConverseInferenceConfig, ConverseMessage, ConverseRequest, ConverseToolConfig } from './model'
import { claudeThinkingFields, reasoningFields, samplingFields } from './model-fields'

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
function toolConfig(req: ChatRequest, cache: CachePoints, thinking: boolean): ConverseToolConfig | undefined {
	const tools = req.tools ?? []
	let choice = req.toolChoice
	if (!tools.length || choice?.type === 'none') return undefined
	// Claude: "Thinking may not be enabled when tool_choice forces tool use" (extended-thinking docs).
	if (thinking && (choice?.type === 'required' || choice?.type === 'tool')) choice = { type: 'auto' }
	const config: ConverseToolConfig = { tools: tools.flatMap((t) => (t.cacheControl && cache.tools ? [toolSpec(t), cachePoint(t.cacheControl, cache.ttl)] : [toolSpec(t)])) }
	if (choice?.type === 'auto') config.toolChoice = { auto: {} }
	else if (choice?.type === 'required') config.toolChoice = { any: {} }
	else if (choice?.type === 'tool') config.toolChoice = { tool: { name: choice.name } }
	return config
}

const toolSpec = (t: Tool) => ({ toolSpec: { name: t.name, ...(t.description && { description: t.description }), inputSchema: { json: t.parameters } } })

/**
 * Canonical request → Converse body. Throws GatewayError (400, retryable for another channel) for what Converse
 * cannot take: another vendor's built-in tools, a web search, audio, files it has no format for.
 * @example encodeRequest({ model: 'nova', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false }, 'us.amazon.nova-pro-v1:0')
 * // { messages: [{ role: 'user', content: [{ text: 'hi' }] }] }
 */
export function encodeRequest(req: ChatRequest, model: string, upstream?: UpstreamOptions): ConverseRequest {
	refuseVendorOnly(req, 'bedrock-converse')
	if (req.webSearch) throw unsupportedForModel(`web search is not available for model "${req.model}" over Bedrock's Converse API`, true, 'tools')
	const foundation = upstream?.foundationModel ?? model
	const family = converseFamily(model, upstream?.foundationModel)
	const cache = cachePointsIn(family)
	const messages = encodeMessages(req.messages, cache)
	const body: ConverseRequest = { messages }
	const system: NonNullable<ConverseRequest['system']> = (req.system ?? [])
		.filter((p) => p.text.trim())
		.flatMap((p) => (p.cacheControl && cache.content ? [{ text: p.text }, cachePoint(p.cacheControl, cache.ttl)] : [{ text: p.text }]))
	const json = req.responseFormat ? jsonInstruction(req.responseFormat) : undefined
	if (json) system.push({ text: json })
	if (system.length) body.system = system
	const claude = family === 'claude' ? claudeThinkingFields(req, foundation, canThink(messages)) : undefined
	// Claude Opus 4.7 and later refuse sampling settings, and thinking refuses temperature and top-k and takes top_p
	// from 0.95 to 1 only (routing/claude-models.ts, extended-thinking docs).
	const fixed = family === 'claude' && claudeFixedSampling(foundation)
	const inference: ConverseInferenceConfig = {}
	const maxTokens = req.maxTokens ?? claude?.maxTokens
	if (maxTokens !== undefined) inference.maxTokens = maxTokens
	if (req.temperature !== undefined && !claude && !fixed) inference.temperature = req.temperature
	if (req.topP !== undefined && !fixed) inference.topP = claude ? Math.min(1, Math.max(0.95, req.topP)) : req.topP
	if (req.stop?.length) inference.stopSequences = req.stop
	if (Object.keys(inference).length) body.inferenceConfig = inference
	const tools = toolConfig(req, cache, claude !== undefined)
	if (tools) body.toolConfig = tools
	else if (hasToolBlocks(messages)) body.messages = toolHistoryAsText(messages)
	const fields = {
		...reasoningFields(family, req.reasoning),
		...(claude && { thinking: claude.thinking, ...(claude.outputConfig && { output_config: claude.outputConfig }) }),
		...(!fixed && samplingFields(family, req, claude !== undefined)),
	}
	if (Object.keys(fields).length) body.additionalModelRequestFields = fields
	// Converse says only that a stop sequence matched; Claude's own answer says which, asked for by its JSON Pointer.
	if (family === 'claude' && req.stop?.length) body.additionalModelResponseFieldPaths = ['/stop_sequence']
	const g = upstream?.guardrail
	// `streamProcessingMode` is GuardrailStreamConfiguration's (ConverseStream): Converse's GuardrailConfiguration has none.
	if (g)
		body.guardrailConfig = { guardrailIdentifier: g.identifier, guardrailVersion: g.version, ...(g.trace && { trace: g.trace }), ...(req.stream && g.streamMode && { streamProcessingMode: g.streamMode }) }
	return body
}

/**
 * Claude refuses thinking when the assistant turn being continued called tools without its reasoning first ("a final
 * assistant message must start with a thinking block"): reasoning from another vendor is not sent back, so such a
 * turn leaves thinking off.
 */
function canThink(messages: ConverseMessage[]): boolean {
	const last = messages.findLast((m) => m.role === 'assistant')
	return !last || !last.content.some((b) => 'toolUse' in b) || 'reasoningContent' in (last.content[0] ?? {})
}
