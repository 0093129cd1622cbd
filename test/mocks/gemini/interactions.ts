/**
 * POST /v1beta/interactions (ai.google.dev/api/interactions-api), the step model: `input` as a string, content, or
 * steps (`user_input`, `model_output`, `thought`, `function_call`, `function_result`), `system_instruction`, function
 * tools (`{type: 'function', name, parameters}`; a `google_search` tool with `#search` adds a search step pair before
 * the answer, and the results it fed the model back as `usage.total_tool_use_tokens`, `SEARCH_TOOL_TOKENS`, apart from
 * `total_input_tokens` and counted in `total_tokens`), `generation_config` (`max_output_tokens`, `stop_sequences`, `thinking_summaries: 'auto'` to think,
 * `tool_choice`). The answer is an Interaction (`steps`, `status`, `usage` with `total_input_tokens`,
 * `total_output_tokens`, `total_thought_tokens`, `total_cached_tokens`), or with `stream: true` its events (`interaction.created`,
 * `step.start`/`step.delta`/`step.stop`, `interaction.completed` without steps), with the tier that served a request
 * naming one in `service_tier` and the `x-gemini-service-tier` header (generate.ts `servedTier`). Like the API it refuses a
 * `function_result` whose `call_id` names no `function_call` of the input, and a thought `signature` it did not issue.
 * @module
 */
import { asArr, asNum, asObj, asStr, type Obj } from '../shared/json'
import { frame, json, type Reply, sse } from '../shared/reply'
import { argKeyOf, forcedTool, plan, resultText, type Conversation, type ToolSpec } from '../shared/scenario'
import { hash36, splitPieces, stableId } from '../shared/text'
import { geminiError } from './errors'
import { servedTier, tierHeaders } from './generate'

/** The tokens of the search results a `google_search` step fed the model (`total_tool_use_tokens`). */
export const SEARCH_TOOL_TOKENS = 12

/** The signature the mock puts on a thought: what it accepts back. */
export const interactionThoughtSignature = (text: string) => `ixsig_${hash36(`thought|${text}`)}`

function read(b: Obj): Conversation | string {
	const inputTexts: string[] = []
	if (typeof b.system_instruction === 'string') inputTexts.push(b.system_instruction)
	const input = typeof b.input === 'string' ? [{ type: 'user_input', content: [{ type: 'text', text: b.input }] }] : asArr(b.input)
	let images = 0
	let lastUserText = ''
	let lastUserImages = 0
	let toolResults: string[] | undefined
	const calls = new Set<string>()
	for (const [i, raw] of input.entries()) {
		const s = asObj(raw) ?? {}
		const content = asArr(s.content).map((c) => asObj(c) ?? {})
		if (s.type === 'user_input' || s.type === 'text' || s.type === 'image') {
			const items = s.type === 'user_input' ? content : [s]
			const texts = items.filter((c) => c.type === 'text').map((c) => String(c.text))
			const imgs = items.filter((c) => c.type === 'image').length
			inputTexts.push(...texts)
			images += imgs
			if (texts.length) lastUserText = texts.join(' ')
			lastUserImages = imgs
			toolResults = undefined
		} else if (s.type === 'model_output') {
			inputTexts.push(...content.filter((c) => c.type === 'text').map((c) => String(c.text)))
		} else if (s.type === 'thought') {
			const text = asArr(s.summary).map((c) => String(asObj(c)?.text ?? '')).join('')
			if (s.signature !== undefined && s.signature !== interactionThoughtSignature(text)) return `input[${i}].signature: Corrupted thought signature.`
		} else if (s.type === 'function_call') {
			if (typeof s.id !== 'string' || !s.id) return `input[${i}].id is required`
			calls.add(s.id)
		} else if (s.type === 'function_result') {
			if (typeof s.call_id !== 'string' || !calls.has(s.call_id)) return `input[${i}].call_id: no function_call with id ${String(s.call_id)} in the input`
			const text = resultText(s.result)
			inputTexts.push(text)
			toolResults = [...(toolResults ?? []), text]
		} else return `input[${i}].type: unknown step type ${String(s.type)}`
	}
	const cfg = asObj(b.generation_config) ?? {}
	const tools: ToolSpec[] = asArr(b.tools)
		.map((t) => asObj(t) ?? {})
		.filter((t) => t.type === 'function' && typeof t.name === 'string')
		.map((t) => ({ name: String(t.name), argKey: argKeyOf(t.parameters), schema: t.parameters }))
	const choice = cfg.tool_choice
	const mode = typeof choice === 'string' ? choice : asStr(asObj(asObj(choice)?.allowed_tools)?.mode)
	return {
		inputTexts,
		images,
		lastUserText,
		lastUserImages: toolResults ? 0 : lastUserImages,
		toolResults,
		tools: mode === 'none' ? [] : tools,
		stop: asArr(cfg.stop_sequences).filter((s): s is string => typeof s === 'string'),
		maxTokens: asNum(cfg.max_output_tokens),
		thinking: cfg.thinking_summaries === 'auto',
		forcedCall: mode === 'any' ? forcedTool(tools, { required: true, name: asStr(asArr(asObj(asObj(choice)?.allowed_tools)?.tools)[0]) }) : undefined,
	}
}

export function createInteraction(body: unknown, jsonError: boolean): Reply {
	const b = asObj(body)
	if (jsonError || !b) return geminiError(400, 'Invalid JSON payload received.')
	if (typeof b.model !== 'string' || !b.model) return geminiError(400, 'model is required')
	const c = read(b)
	if (typeof c === 'string') return geminiError(400, c)
	const p = plan(c)
	const searched = c.lastUserText.includes('#search') && asArr(b.tools).some((t) => asObj(t)?.type === 'google_search')
	const id = stableId('v1_', JSON.stringify(b))
	const steps: Obj[] = []
	if (p.thinking) steps.push({ type: 'thought', signature: interactionThoughtSignature(p.thinking), summary: [{ type: 'text', text: p.thinking }] })
	if (searched) steps.push({ type: 'google_search_call', id: 'gs_1', arguments: { queries: [c.lastUserText] } }, { type: 'google_search_result', call_id: 'gs_1', result: [{ title: 'Mock', url: 'https://example.com' }] })
	if (p.text) steps.push({ type: 'model_output', content: [{ type: 'text', text: p.text }] })
	for (const [i, call] of p.calls.entries()) steps.push({ type: 'function_call', id: `fc_${hash36(`${id}|${i}`)}`, name: call.name, arguments: call.args })
	const status = p.calls.length ? 'requires_action' : p.finish === 'length' ? 'incomplete' : 'completed'
	const usage: Obj = { total_input_tokens: p.usage.input, total_output_tokens: p.usage.output - p.usage.reasoning, total_tokens: p.usage.input + p.usage.output }
	if (searched) Object.assign(usage, { total_tool_use_tokens: SEARCH_TOOL_TOKENS, total_tokens: Number(usage.total_tokens) + SEARCH_TOOL_TOKENS })
	if (p.usage.reasoning) usage.total_thought_tokens = p.usage.reasoning
	// The cached part of the prompt, included in total_input_tokens (`#cache`).
	if (p.usage.cached) usage.total_cached_tokens = p.usage.cached
	const now = new Date().toISOString()
	const head = { id, object: 'interaction', model: b.model, created: now, updated: now }
	const tier = servedTier(b.service_tier, c.lastUserText)
	const served = tier?.inBody ? { service_tier: tier.inBody } : {}
	if (b.stream !== true) return json({ ...head, status, steps, usage, ...served }, 200, tierHeaders(tier))
	const events: string[] = []
	const ev = (type: string, data: Obj) => events.push(frame({ event_type: type, ...data, event_id: `e${events.length}` }, type))
	ev('interaction.created', { interaction: { ...head, status: 'in_progress' } })
	steps.forEach((s, index) => {
		if (s.type === 'model_output') {
			ev('step.start', { index, step: { type: 'model_output' } })
			for (const piece of splitPieces(p.text)) ev('step.delta', { index, delta: { type: 'text', text: piece } })
		} else if (s.type === 'thought') {
			ev('step.start', { index, step: { type: 'thought' } })
			ev('step.delta', { index, delta: { type: 'thought_summary', content: { type: 'text', text: p.thinking } } })
			ev('step.delta', { index, delta: { type: 'thought_signature', signature: s.signature } })
		} else if (s.type === 'function_call') {
			ev('step.start', { index, step: { ...s, arguments: {} } })
			const args = JSON.stringify(s.arguments)
			const at = Math.ceil(args.length / 2)
			for (const part of [args.slice(0, at), args.slice(at)]) ev('step.delta', { index, delta: { type: 'arguments_delta', arguments: part } })
		} else ev('step.start', { index, step: s })
		ev('step.stop', { index })
	})
	ev('interaction.completed', { interaction: { ...head, status, usage, ...served } })
	// Google's end marker (https://ai.google.dev/gemini-api/docs/interactions/streaming).
	events.push('event: done\ndata: [DONE]\n\n')
	return sse(events, 1, tierHeaders(tier))
}
