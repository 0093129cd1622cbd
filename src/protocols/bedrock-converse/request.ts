/**
 * Canonical request → the body of Bedrock's Converse and ConverseStream
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_RequestSyntax):
 * `system` blocks, `messages` (content.ts), `inferenceConfig` (maxTokens, temperature, topP, stopSequences),
 * `toolConfig` (tools as `toolSpec` with the JSON schema under `inputSchema.json`; `toolChoice` auto, any or one tool),
 * and, for reasoning, the model family's own field in `additionalModelRequestFields`. The model and the stream flag
 * are in the path, not the body.
 * @module
 */
import { unsupportedForModel } from '../../core/errors'
import type { ChatRequest, Reasoning, ReasoningEffort, Tool } from '../../core/ir'
import { budgetToEffort } from '../../core/reasoning'
import type { UpstreamOptions } from '../codec'
import { jsonInstruction } from '../json-instruction'
import { refuseVendorOnly } from '../vendor-only'
import { encodeMessages } from './content'
import type { ConverseInferenceConfig, ConverseMessage, ConverseRequest, ConverseToolConfig } from './model'

/** Converse's three effort levels; the canonical `minimal` is its lowest. */
function effortOf(r: Reasoning): Exclude<ReasoningEffort, 'minimal'> {
	const e = r.effort ?? (r.budgetTokens !== undefined ? budgetToEffort(r.budgetTokens) : 'medium')
	return e === 'minimal' ? 'low' : e
}

/**
 * Reasoning as the model family takes it in `additionalModelRequestFields`, where Converse has no field of its own:
 * Amazon Nova 2 `reasoningConfig: {type: "enabled", maxReasoningEffort}` (https://docs.aws.amazon.com/nova/latest/nova2-userguide/extended-thinking.html),
 * OpenAI's gpt-oss `reasoning_effort`. Other families reason as they always do (DeepSeek-R1) or not at all, and get
 * nothing they would refuse as an unknown field.
 * @example reasoningFields('us.amazon.nova-2-lite-v1:0', { enabled: true, effort: 'high' }) // { reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } }
 */
export function reasoningFields(model: string, r: Reasoning | undefined): Record<string, unknown> | undefined {
	if (!r?.enabled) return undefined
	if (/(?:^|[.:/])amazon\.nova-2/.test(model)) return { reasoningConfig: { type: 'enabled', maxReasoningEffort: effortOf(r) } }
	if (/(?:^|[.:/])openai\.gpt-oss/.test(model)) return { reasoning_effort: effortOf(r) }
	return undefined
}

const hasToolBlocks = (messages: ConverseMessage[]) => messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b))

/**
 * `toolConfig`, or undefined. Converse has no "none" choice: the tools are left out then, unless the conversation
 * holds tool calls, which Converse refuses without a `toolConfig` ("The toolConfig field must be defined when using
 * toolUse and toolResult content blocks"); the model is then asked with them and no choice.
 */
function toolConfig(req: ChatRequest, messages: ConverseMessage[]): ConverseToolConfig | undefined {
	const tools = req.tools ?? []
	if (!tools.length) return undefined
	const choice = req.toolChoice
	if (choice?.type === 'none' && !hasToolBlocks(messages)) return undefined
	const config: ConverseToolConfig = { tools: tools.map(toolSpec) }
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
export function encodeRequest(req: ChatRequest, model: string, _upstream?: UpstreamOptions): ConverseRequest {
	refuseVendorOnly(req, 'bedrock-converse')
	if (req.webSearch) throw unsupportedForModel(`web search is not available for model "${req.model}" over Bedrock's Converse API`, true, 'tools')
	const messages = encodeMessages(req.messages)
	const body: ConverseRequest = { messages }
	const system = (req.system ?? []).filter((p) => p.text.trim()).map((p) => ({ text: p.text }))
	const json = req.responseFormat ? jsonInstruction(req.responseFormat) : undefined
	if (json) system.push({ text: json })
	if (system.length) body.system = system
	const inference: ConverseInferenceConfig = {}
	if (req.maxTokens !== undefined) inference.maxTokens = req.maxTokens
	if (req.temperature !== undefined) inference.temperature = req.temperature
	if (req.topP !== undefined) inference.topP = req.topP
	if (req.stop?.length) inference.stopSequences = req.stop
	if (Object.keys(inference).length) body.inferenceConfig = inference
	const tools = toolConfig(req, messages)
	if (tools) body.toolConfig = tools
	const fields = reasoningFields(model, req.reasoning)
	if (fields) body.additionalModelRequestFields = fields
	return body
}
