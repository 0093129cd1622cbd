/**
 * Interactions steps ⇄ canonical messages. A conversation is a list of steps: `user_input` and `function_result` are
 * the user's side, `model_output`, `thought` and `function_call` the model's; consecutive steps of one side make one
 * canonical message. `input` may also be a string, one content item or a list of them (one user turn), or turns of the
 * earlier revision (`{role: 'user' | 'model', content}`), read the same way.
 *
 * A thought's `signature` and a function call's signature (packed into its `id`, core/tool-ids.ts, as the chat codecs
 * carry it) go back to the vendor that made them: the client sends them as it was given them. Thinking the client did
 * not ask to see rides whole in its thought step's signature (`thoughtStep`).
 * https://ai.google.dev/api/interactions-api
 * @module
 */
import { badRequest } from '../../core/errors'
import type { Message, Part, RedactedThinkingPart, TextPart, ThinkingPart, ToolCallPart, ToolResultPart } from '../../core/ir'
import { packToolCallId, plainToolCallId, unpackToolCallId } from '../../core/tool-ids'
import { carryThinking, isCarried, readCarried, worthCarrying } from '../gemini/carried-thinking'
import { isObj, type Obj } from '../gemini/read'
import { decodeContent, encodeContent, type InputPart, isContent } from './content'

type Side = 'user' | 'assistant'

/**
 * The request's `input` → canonical messages.
 * @example decodeInput('hi') // [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]
 */
export function decodeInput(input: unknown, at = 'input'): Message[] {
	if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }]
	if (isContent(input)) return [{ role: 'user', content: [decodeContent(input, at)] }]
	if (!Array.isArray(input)) throw badRequest(`${at} must be a string, a content object or a list of content or steps`, at)
	if (input.every(isContent)) return input.length ? [{ role: 'user', content: input.map((c, i) => decodeContent(c, `${at}[${i}]`)) }] : []
	const out: Message[] = []
	const add = (role: Side, parts: Part[]) => {
		if (!parts.length) return
		const last = out.at(-1)
		if (last?.role === role) last.content.push(...parts)
		else out.push({ role, content: parts })
	}
	input.forEach((step, i) => {
		const where = `${at}[${i}]`
		if (!isObj(step)) throw badRequest(`${where} must be a step object`, where)
		// A turn of the earlier revision: `{role, content}`, content a string or a list of content and calls.
		if (typeof step.role === 'string' && step.type === undefined) {
			const role: Side = step.role === 'model' || step.role === 'assistant' ? 'assistant' : 'user'
			const content = typeof step.content === 'string' ? [{ type: 'text', text: step.content }] : step.content
			if (!Array.isArray(content)) throw badRequest(`${where}.content must be a string or a list`, `${where}.content`)
			content.forEach((c, j) => {
				const s = decodeStep(c, `${where}.content[${j}]`, role)
				add(s.role, s.parts)
			})
			return
		}
		const s = decodeStep(step, where, undefined)
		add(s.role, s.parts)
	})
	return out
}

/** One step (or one item of a turn, whose side `turn` is) → its side and parts. */
function decodeStep(step: unknown, at: string, turn: Side | undefined): { role: Side; parts: Part[] } {
	if (!isObj(step) || typeof step.type !== 'string') throw badRequest(`${at} must be an object with a type`, at)
	if (isContent(step)) return { role: turn ?? 'user', parts: [decodeContent(step, at)] }
	switch (step.type) {
		case 'user_input':
			return { role: 'user', parts: contentList(step.content, `${at}.content`) }
		case 'model_output':
			// The model's output as text: media it made (images, audio) has no canonical input form, so it is left out.
			return { role: 'assistant', parts: contentList(step.content, `${at}.content`).filter((p): p is TextPart => p.type === 'text') }
		case 'thought': {
			const summary = Array.isArray(step.summary) ? step.summary : []
			const text = summary.map((c) => (isObj(c) && c.type === 'text' && typeof c.text === 'string' ? c.text : '')).join('')
			const signature = typeof step.signature === 'string' && step.signature ? step.signature : undefined
			// Thinking the client was not shown, carried whole in the signature (thoughtStep): put back as it was.
			if (signature && isCarried(signature)) return { role: 'assistant', parts: readCarried(signature, `${at}.signature`)!.map((c) => c.part) }
			if (!text && !signature) return { role: 'assistant', parts: [] }
			const part: ThinkingPart = { type: 'thinking', text, ...(signature && { signature }) }
			return { role: 'assistant', parts: [part] }
		}
		case 'function_call': {
			if (typeof step.name !== 'string' || !step.name) throw badRequest(`${at}.name is required`, `${at}.name`)
			if (typeof step.id !== 'string' || !step.id) throw badRequest(`${at}.id is required`, `${at}.id`)
			const args = step.arguments === undefined ? {} : step.arguments
			if (!isObj(args)) throw badRequest(`${at}.arguments must be an object`, `${at}.arguments`)
			const { id, signature } = unpackToolCallId(step.id)
			const part: ToolCallPart = { type: 'tool_call', id, name: step.name, input: args, ...(signature && { signature }) }
			return { role: 'assistant', parts: [part] }
		}
		case 'function_result': {
			if (typeof step.call_id !== 'string' || !step.call_id) throw badRequest(`${at}.call_id is required`, `${at}.call_id`)
			const part: ToolResultPart = {
				type: 'tool_result',
				toolCallId: plainToolCallId(step.call_id),
				...(typeof step.name === 'string' && step.name && { name: step.name }),
				content: resultContent(step.result, `${at}.result`),
				...(step.is_error === true && { isError: true }),
			}
			return { role: 'user', parts: [part] }
		}
	}
	throw badRequest(`${at}.type "${step.type}" is not a step this gateway can send to a model (user_input, model_output, thought, function_call, function_result)`, `${at}.type`)
}

function contentList(v: unknown, at: string): InputPart[] {
	if (v === undefined || v === null) return []
	if (typeof v === 'string') return [{ type: 'text', text: v }]
	if (!Array.isArray(v)) throw badRequest(`${at} must be a list of content`, at)
	return v.map((c, i) => decodeContent(c, `${at}[${i}]`))
}

/**
 * A function result: a string, a list of content, or any JSON value (sent as its JSON text). Audio a tool returned is
 * kept (named by its path): a vendor that takes no audio refuses it with a 400 rather than the model never hearing it.
 */
function resultContent(v: unknown, at: string): ToolResultPart['content'] {
	if (typeof v === 'string') return [{ type: 'text', text: v }]
	if (Array.isArray(v) && v.length && v.every(isContent)) return v.map((c, i) => decodeContent(c, `${at}[${i}]`))
	return [{ type: 'text', text: JSON.stringify(v ?? null) }]
}

/** A canonical tool call → its `function_call` step, the signature packed into the id the client sends back. */
export const functionCallStep = (p: ToolCallPart): Obj => ({ type: 'function_call', id: packToolCallId(p.id, p.signature), name: p.name, arguments: p.input })

/**
 * A canonical thinking part → its `thought` step. Shown (the client asked for summaries): the text as the summary, the
 * signature as it is. Hidden, and always for redacted thinking: no summary, and the whole thinking carried in the
 * signature (gemini/carried-thinking.ts), since the vendor that made it needs it back whole on the next turn (Claude
 * refuses thinking whose text does not match its signature); undefined when there is nothing to carry.
 */
export function thoughtStep(p: ThinkingPart | RedactedThinkingPart, showSummary: boolean): Obj | undefined {
	if (p.type === 'thinking' && showSummary) return { type: 'thought', ...(p.signature && { signature: p.signature }), ...(p.text && { summary: [{ type: 'text', text: p.text }] }) }
	return worthCarrying(p) ? { type: 'thought', signature: carryThinking([{ at: 0, part: p }]) } : undefined
}

/** Canonical messages → steps (the conversation sent to an upstream of this protocol). */
export function encodeSteps(messages: Message[]): Obj[] {
	const steps: Obj[] = []
	for (const m of messages) {
		let content: Obj[] | undefined
		const flush = () => {
			if (content?.length) steps.push({ type: m.role === 'user' ? 'user_input' : 'model_output', content })
			content = undefined
		}
		for (const p of m.content) {
			if (p.type === 'tool_call') {
				flush()
				steps.push(functionCallStep(p))
			} else if (p.type === 'tool_result') {
				flush()
				const text = p.content.every((c) => c.type === 'text')
				steps.push({
					type: 'function_result',
					call_id: p.toolCallId,
					...(p.name && { name: p.name }),
					result: text ? p.content.map((c) => (c as TextPart).text).join('') : p.content.map(encodeContent),
					...(p.isError && { is_error: true }),
				})
			} else if (p.type === 'thinking') {
				flush()
				steps.push(thoughtStep(p, true)!)
			} else if (p.type === 'redacted_thinking') continue
			else (content ??= []).push(encodeContent(p))
		}
		flush()
	}
	return steps
}
