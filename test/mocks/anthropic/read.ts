/**
 * Reads and validates a Messages request the way the Anthropic API does (docs.anthropic.com/en/api/messages),
 * with its own error texts: required `max_tokens`, `temperature` ≤ 1, tool_use/tool_result pairing, thinking
 * budget rules, signed thinking blocks replayed verbatim, and a thinking block first in the tool-loop assistant turn.
 * @module
 */

import { asArr, asNum, asObj, asStr, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { formatOf } from '../shared/structured'
import { argKeyOf, forcedTool, type Conversation, type ToolSpec } from '../shared/scenario'
import { base64, hash36 } from '../shared/text'
import { checkBlocks, checkCacheBreakpoints, checkTexts } from './blocks'
import { invalid } from './errors'
import { checkOutputFormat, checkStrictTools } from './output-format'

/** Leading bytes of every mock signature, so that its base64 starts `++//`: Anthropic's signatures are standard base64 with `+` and `/`. */
const SIGNATURE_LEAD = Buffer.from([0xfb, 0xef, 0xff])

/**
 * The signature the mock puts on a thinking block, and expects back verbatim with the same text: standard base64, as
 * Anthropic's are (its docs' example: "WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL…").
 * @example thinkingSignature('Let me think about hi.') // '++//bW9jay10aGlua2luZ3…'
 */
export const thinkingSignature = (thinking: string): string =>
	Buffer.concat([SIGNATURE_LEAD, Buffer.from(`mock-thinking|${hash36(thinking)}|${thinking.length}`)]).toString('base64')

/** A replayed thinking block is valid with the signature issued for its text, or (display omitted) with any issued one. */
const validSignature = (thinking: string, signature: unknown): boolean =>
	typeof signature === 'string' &&
	(thinking === ''
		? signature.startsWith('++//') && Buffer.from(signature, 'base64').subarray(SIGNATURE_LEAD.length).toString().startsWith('mock-thinking|')
		: signature === thinkingSignature(thinking))

/** Content blocks of a message (a string content is one text block). */
export const blocksOf = (content: unknown): Obj[] =>
	typeof content === 'string' ? [{ type: 'text', text: content }] : asArr(content).map((b) => asObj(b) ?? {})

/**
 * Text of a `tool_result` content: a string, or its text blocks joined, with the text a document block gives the model
 * (a plain-text source's data, a custom-content source's text blocks; its images count as images).
 */
function resultContent(content: unknown): { text: string; images: number } {
	if (typeof content === 'string') return { text: content, images: 0 }
	const blocks = blocksOf(content).flatMap((b) => {
		const source = b.type === 'document' ? asObj(b.source) : undefined
		if (source?.type === 'text') return [{ type: 'text', text: source.data }]
		if (source?.type === 'content') return blocksOf(source.content)
		return [b]
	})
	return { text: blocks.filter((b) => b.type === 'text').map((b) => String(b.text ?? '')).join(' '), images: blocks.filter((b) => b.type === 'image').length }
}

const ids = (blocks: Obj[], type: string, key: string): string[] => blocks.filter((b) => b.type === type).map((b) => String(b[key] ?? ''))

/** tool_use ⇄ tool_result pairing between consecutive turns. */
function checkPairing(messages: Obj[]): JsonReply | undefined {
	for (let i = 0; i < messages.length; i++) {
		const blocks = blocksOf(messages[i].content)
		if (messages[i].role === 'user') {
			const prev = i > 0 && messages[i - 1].role === 'assistant' ? ids(blocksOf(messages[i - 1].content), 'tool_use', 'id') : []
			for (let j = 0; j < blocks.length; j++) {
				if (blocks[j].type !== 'tool_result' || prev.includes(String(blocks[j].tool_use_id))) continue
				return invalid(
					`messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(blocks[j].tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
				)
			}
		}
		const uses = messages[i].role === 'assistant' ? ids(blocks, 'tool_use', 'id') : []
		if (uses.length === 0 || i === messages.length - 1) continue
		const answered = ids(blocksOf(messages[i + 1].content), 'tool_result', 'tool_use_id')
		const missing = uses.filter((id) => !answered.includes(id))
		if (missing.length > 0) {
			return invalid(
				`messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
			)
		}
	}
}

/** Replayed thinking must keep its signature; with thinking on, the tool-loop assistant turn must start with it. */
function checkThinking(messages: Obj[], thinkingOn: boolean): JsonReply | undefined {
	for (let i = 0; i < messages.length; i++) {
		if (messages[i].role !== 'assistant') continue
		const blocks = blocksOf(messages[i].content)
		for (let j = 0; j < blocks.length; j++) {
			const b = blocks[j]
			if (b.type === 'thinking' && !validSignature(String(b.thinking ?? ''), b.signature)) {
				return invalid(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`)
			}
		}
	}
	const last = messages.length - 1
	if (!thinkingOn || last < 1 || ids(blocksOf(messages[last].content), 'tool_result', 'tool_use_id').length === 0) return
	const first = blocksOf(messages[last - 1].content)[0]
	if (messages[last - 1].role === 'assistant' && first && first.type !== 'thinking' && first.type !== 'redacted_thinking') {
		return invalid(
			`messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
		)
	}
}

/** Whether the request turns extended thinking on (`enabled` with a budget, or `adaptive`). */
export const thinkingOn = (b: Obj): boolean => ['enabled', 'adaptive'].includes(String(asObj(b.thinking)?.type))

/** API version 2026-10-21 removed the sampling parameters: sending any of them is a 400, even at default values. */
const NEW_VERSION = '2026-10-21'
const SAMPLING = ['temperature', 'top_p', 'top_k']

/**
 * Claude Opus 4.7 and later take adaptive thinking only and refuse sampling settings; Fable, Mythos and Opus 5.5
 * always think (platform.claude.com/docs/en/about-claude/models/migration-guide#migrating-to-claude-opus-4-7,
 * models/sonnet-5/overview, models/opus-5-5/overview, models/fable-5-1/overview). The 400 texts are Anthropic's as
 * reported (NousResearch/hermes-agent#11137, Comfy-Org/ComfyUI#13923).
 */
const ADAPTIVE_ONLY = /claude-(opus-4-[7-9]|(opus|sonnet|haiku|fable|mythos)-([5-9]|\d\d)|mythos)/
const ALWAYS_THINKS = /claude-(fable|mythos|opus-5-5)/

/**
 * The index of a `system` message in `messages` when `betas` lacks the beta that allows one there
 * (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages): what the clouds check, whose
 * Claude takes betas only from their own lists.
 */
export function midConversationSystem(messages: unknown, betas: readonly string[]): number | undefined {
	if (!Array.isArray(messages) || betas.includes('mid-conversation-system-2026-04-07')) return undefined
	const i = messages.findIndex((m) => (m as { role?: unknown } | null)?.role === 'system')
	return i < 0 ? undefined : i
}

/** A custom tool's name: letters, digits, `_` and `-` (https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/

/**
 * Validates a Messages body for an `anthropic-version`; `forCount` skips the generation-only fields
 * (count_tokens takes no max_tokens).
 */
export function checkMessages(b: Obj, version: string, forCount = false): JsonReply | undefined {
	if (typeof b.model !== 'string') return invalid('model: Field required')
	if (b.messages === undefined) return invalid('messages: Field required')
	if (!Array.isArray(b.messages)) return invalid('messages: Input should be a valid list')
	const messages = b.messages.map((m) => asObj(m) ?? {})
	for (let i = 0; i < messages.length; i++) {
		// A mid-conversation system message stands right after a user turn
		// (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages).
		if (messages[i].role === 'system' && messages[i - 1]?.role === 'user') continue
		if (messages[i].role !== 'user' && messages[i].role !== 'assistant') return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`)
	}
	for (const [i, t] of asArr(b.tools).entries()) {
		const tool = asObj(t) ?? {}
		if ((tool.type === undefined || tool.type === 'custom') && !asObj(tool.input_schema)) return invalid(`tools.${i}.custom.input_schema: Field required`)
		// Anthropic's wording for a name it refuses (seen in home-assistant/core#147760; its docs give the same characters).
		if ((tool.type === undefined || tool.type === 'custom') && !TOOL_NAME.test(String(tool.name))) return invalid(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`)
	}
	if (!forCount) {
		const max = b.max_tokens
		if (max === undefined) return invalid('max_tokens: Field required')
		if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) return invalid('max_tokens: Input should be greater than or equal to 1')
		const removed = version >= NEW_VERSION ? SAMPLING.find((k) => b[k] !== undefined) : undefined
		if (removed) return invalid(`${removed}: Extra inputs are not permitted`)
		if (ADAPTIVE_ONLY.test(b.model)) {
			const sampling = SAMPLING.find((k) => b[k] !== undefined)
			if (sampling) return invalid(`\`${sampling}\` is deprecated for this model.`)
			const type = asObj(b.thinking)?.type
			if (type === 'enabled') return invalid('"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.')
			if (type === 'disabled' && ALWAYS_THINKS.test(b.model)) return invalid('"thinking.type.disabled" is not supported for this model.')
		}
		const temperature = asNum(b.temperature)
		if (temperature !== undefined && temperature > 1) return invalid('temperature: Input should be less than or equal to 1')
		if (temperature !== undefined && temperature < 0) return invalid('temperature: Input should be greater than or equal to 0')
		const thinking = asObj(b.thinking)
		if (thinking?.type === 'enabled') {
			const budget = asNum(thinking.budget_tokens)
			if (budget === undefined) return invalid('thinking.enabled.budget_tokens: Field required')
			if (budget < 1024) return invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024')
			if (budget >= max) {
				return invalid(
					'`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
				)
			}
		}
		if (thinkingOn(b)) {
			const forced = asStr(asObj(b.tool_choice)?.type)
			if (forced === 'any' || forced === 'tool') return invalid('Thinking may not be enabled when tool_choice forces tool use.')
			if (temperature !== undefined && temperature !== 1) return invalid('`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.')
		}
	}
	return checkBlocks(messages) ?? checkTexts(messages) ?? checkCacheBreakpoints(b) ?? checkPairing(messages) ?? checkThinking(messages, thinkingOn(b)) ?? checkStrictTools(b) ?? (forCount ? undefined : checkOutputFormat(b))
}

/** Tools with a custom `input_schema` (server tools are ignored). */
function toolSpecs(tools: unknown): ToolSpec[] {
	const out: ToolSpec[] = []
	for (const t of asArr(tools)) {
		const tool = asObj(t)
		const name = asStr(tool?.name)
		if (name && asObj(tool?.input_schema)) out.push({ name, argKey: argKeyOf(tool?.input_schema), schema: tool?.input_schema })
	}
	return out
}

/** The neutral conversation of a validated Messages body. */
export function readMessages(b: Obj): Conversation {
	const inputTexts: string[] = []
	if (typeof b.system === 'string') inputTexts.push(b.system)
	else for (const s of blocksOf(b.system)) if (typeof s.text === 'string') inputTexts.push(s.text)
	let images = 0
	let lastUserText = ''
	let lastUserImages = 0
	let toolResults: string[] | undefined
	let prefill: string | undefined
	for (const m of asArr(b.messages).map((x) => asObj(x) ?? {})) {
		const texts: string[] = []
		const results: string[] = []
		let imgs = 0
		for (const block of blocksOf(m.content)) {
			if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text)
			else if (block.type === 'image') imgs++
			else if (block.type === 'tool_result') {
				const r = resultContent(block.content)
				results.push(r.text)
				images += r.images
			}
		}
		inputTexts.push(...texts, ...results)
		images += imgs
		// A final assistant message is continued (an empty one is no prefill): only the last one counts.
		prefill = m.role === 'assistant' && !blocksOf(m.content).some((x) => x.type === 'tool_use') ? texts.join('') || undefined : undefined
		if (m.role !== 'user') continue
		if (texts.length > 0) lastUserText = texts.join(' ')
		lastUserImages = imgs
		toolResults = results.length > 0 ? results : undefined
	}
	return {
		inputTexts,
		images,
		lastUserText,
		lastUserImages: toolResults ? 0 : lastUserImages,
		toolResults,
		// `tool_choice: {type: 'none'}`: the model sees the tools but may not call them.
		tools: asObj(b.tool_choice)?.type === 'none' ? [] : toolSpecs(b.tools),
		stop: asArr(b.stop_sequences).filter((s): s is string => typeof s === 'string'),
		maxTokens: asNum(b.max_tokens),
		thinking: thinkingOn(b),
		// Structured outputs: `output_config.format` (GA), `output_format` (the structured-outputs beta).
		format: formatOf(asObj(b.output_config)?.format ?? b.output_format, (f) => f.schema),
		forcedCall: forcedCall(b),
		singleCall: asObj(b.tool_choice)?.disable_parallel_tool_use === true,
		prefill,
	}
}

/** The tool `tool_choice` forces: `{type: 'tool', name}`, or the first for `{type: 'any'}`. */
function forcedCall(b: Obj): Conversation['forcedCall'] {
	const choice = asObj(b.tool_choice)
	return forcedTool(toolSpecs(b.tools), { required: choice?.type === 'any', name: choice?.type === 'tool' ? asStr(choice.name) : undefined })
}
