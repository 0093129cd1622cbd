/**
 * The Responses API's call ⇄ output pairing, as OpenAI refuses an input that breaks it: every output item answers a
 * call item of the input by its `call_id`, and every call the client runs is answered by an output somewhere in the
 * input (a set, not an order: an output may even come first). In OpenAI's words (`No tool output found for function
 * call call_1.`, `param: input`, no code). Checked by the gateway only when the request goes to another vendor, after a
 * converted `previous_response_id` or conversation became plain input, whose refusal would name its own fields
 * (Anthropic: "messages.1: `tool_use` ids were found without `tool_result` blocks").
 *
 * Less strict than OpenAI in one place, as the other protocols' checks are: the calls of the input's last step (no
 * message or output after them) are left to the vendor, the one turn a client may end with unanswered. An output given
 * before its call passes, as OpenAI takes it, and is read after the call (`readingOrder`), where the others need it.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { isObject, type Json } from '../openai-chat/guards'
import { callIdIn } from './call-ids'
import { outputCallId } from './typed-tools'

/**
 * Call items the client runs and must answer, and how OpenAI names each kind in its refusal (a `local_shell_call` as a
 * function call: its output may be a `function_call_output`).
 */
const ANSWERED_CALLS: Record<string, string> = {
	function_call: 'function call',
	custom_tool_call: 'custom tool call',
	local_shell_call: 'function call',
	shell_call: 'shell call',
	apply_patch_call: 'apply patch call',
}

/** Call items an output may answer: those, and a client-run tool search (a hosted one has no output to wait for). */
const CALLS = new Set([...Object.keys(ANSWERED_CALLS), 'tool_search_call'])

/** Output items, and the call they name in a refusal (a `local_shell_call` is answered by a `function_call_output` too). */
const OUTPUTS: Record<string, string> = {
	function_call_output: 'function call',
	custom_tool_call_output: 'custom tool call',
	local_shell_call_output: 'local shell call',
	shell_call_output: 'shell call',
	apply_patch_call_output: 'apply patch call',
	tool_search_output: 'tool search call',
}

/** Items that may stand after the last step's calls and still leave it the last (its reasoning, other calls). */
const STEP_ITEMS = new Set([...CALLS, 'reasoning'])

/** The canonical id of an item's `call_id` (a converted answer's are packed: call-ids.ts), as vendors see it. */
const idOf = (raw: unknown): string | undefined => (typeof raw === 'string' ? callIdIn(raw).id : undefined)

/**
 * The first break of the pairing, in OpenAI's words, or undefined: an output answering no call first, then a call no
 * output answers (before the last step).
 * @example unpairedTools({ input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }] })?.message === 'No tool call found for function call output with call_id c.'
 */
export function unpairedTools(body: Record<string, unknown>): GatewayError | undefined {
	const items = Array.isArray(body.input) ? (body.input.filter(isObject) as Json[]) : []
	const calls = new Set<string>()
	const answered = new Set<string>()
	for (const item of items) {
		const type = String(item.type)
		if (CALLS.has(type)) {
			const id = idOf(item.call_id)
			if (id !== undefined) calls.add(id)
		} else if (type in OUTPUTS) {
			const id = idOf(outputCallId(item))
			if (id !== undefined) answered.add(id)
		}
	}
	for (const item of items) {
		const type = String(item.type)
		const id = type in OUTPUTS ? idOf(outputCallId(item)) : undefined
		if (id !== undefined && !calls.has(id)) return refused(`No tool call found for ${OUTPUTS[type]} output with call_id ${raw(item)}.`)
	}
	let lastStep = items.length
	while (lastStep > 0 && STEP_ITEMS.has(String(items[lastStep - 1]!.type))) lastStep--
	for (let i = 0; i < lastStep; i++) {
		const item = items[i]!
		const what = ANSWERED_CALLS[String(item.type)]
		const id = what ? idOf(item.call_id) : undefined
		if (id !== undefined && !answered.has(id)) return refused(`No tool output found for ${what} ${raw(item)}.`)
	}
	return undefined
}

/** The `call_id` as the client sent it. */
const raw = (item: Json): string => String(outputCallId(item) ?? item.call_id)

const refused = (message: string) => new GatewayError('invalid_request', message, { param: 'input' })

/**
 * The order to read an input's items in (indices): as given, but an output item that comes before the call it answers
 * goes right after the run of calls holding that call, so the result follows its call as Anthropic and Gemini require
 * (OpenAI pairs by `call_id` anywhere). The same array of indices in order when nothing moves (the usual case).
 * @example readingOrder([{ type: 'function_call_output', call_id: 'c' }, { type: 'function_call', call_id: 'c' }]) // [1, 0]
 */
export function readingOrder(items: unknown[]): number[] {
	const callAt = new Map<string, number>()
	items.forEach((item, i) => {
		const id = isObject(item) && CALLS.has(String(item.type)) ? idOf(item.call_id) : undefined
		if (id !== undefined && !callAt.has(id)) callAt.set(id, i)
	})
	/** Outputs moved, by the index of the last call of the run they now follow. */
	let moved: Map<number, number[]> | undefined
	items.forEach((item, i) => {
		const id = isObject(item) && String(item.type) in OUTPUTS ? idOf(outputCallId(item)) : undefined
		const call = id === undefined ? undefined : callAt.get(id)
		if (call === undefined || call < i) return
		let end = call
		while (end + 1 < items.length && isCall(items[end + 1])) end++
		moved ??= new Map()
		const after = moved.get(end)
		if (after) after.push(i)
		else moved.set(end, [i])
	})
	const order: number[] = []
	if (!moved) {
		for (let i = 0; i < items.length; i++) order.push(i)
		return order
	}
	const early = new Set([...moved.values()].flat())
	for (let i = 0; i < items.length; i++) {
		if (!early.has(i)) order.push(i)
		order.push(...(moved.get(i) ?? []))
	}
	return order
}

const isCall = (item: unknown): boolean => isObject(item) && CALLS.has(String(item.type))
