/**
 * `response.steer` on the Responses WebSocket: user input queued for the response running on the connection, which a
 * successor response then continues with (OpenAI's `ResponseSteerEvent`, with `response.steer.accepted`, `.pending`
 * and `.failed`: the openai SDKs' generated types, from OpenAI's API spec, and developers.openai.com/api/reference, the
 * Responses `connect` method). OpenAI may stop the running response early at a safe output boundary (`incomplete`,
 * reason `steered`) or let it complete; the gateway, whose upstream is a streamed POST, always lets it complete, then:
 * - the response ended without waiting for the client (no tool call of the client's to answer): a successor
 *   `response.create` is served at once, with the response's settings, `previous_response_id` naming it and the queued
 *   input, in submission order, as its input; its `response.created` is the commit point;
 * - it waits for the client's tool results or approvals: `response.steer.pending` (`waiting_for_required_input`) with
 *   stubs of what is owed, and the queued input goes before the input of the client's next `response.create` naming it;
 * - it failed, or the successor could not be created: `response.steer.failed`, the input handed back.
 * These helpers are pure; the state is the connection's (socket.ts).
 * @module
 */
import { isObject } from '../../core/json'

/** A steering submission the connection accepted: its id, the response it steers, and its input as items. */
export type Steer = { id: string; target: string; input: unknown; items: unknown[] }

/** At most this many submissions wait per response (beyond, `too_many_pending_steers`). */
export const MAX_STEERS = 8

/** The message content parts steering takes (OpenAI: `input_text`, `input_image`, `input_file`). */
const PARTS = new Set(['input_text', 'input_image', 'input_file'])

/**
 * Why a `response.steer` event is refused as it stands, or undefined. It takes only `type`, `previous_response_id` and
 * `input`; the input is a non-empty string or a non-empty list of `user` messages (`type` `message` if given, `role`,
 * `content` a string or `input_text`/`input_image`/`input_file` parts), as OpenAI's event documents it.
 */
export function invalidSteer(event: Record<string, unknown>): string | undefined {
	const extra = Object.keys(event).find((k) => k !== 'type' && k !== 'previous_response_id' && k !== 'input')
	if (extra) return `\`response.steer\` takes only \`type\`, \`previous_response_id\` and \`input\`, not \`${extra}\``
	if (typeof event.previous_response_id !== 'string' || !event.previous_response_id) return '`previous_response_id` must name the response to steer'
	const input = event.input
	if (typeof input === 'string') return input ? undefined : '`input` must not be empty'
	if (!Array.isArray(input) || input.length === 0) return '`input` must be a string or a non-empty list of user messages'
	for (const [i, item] of input.entries()) {
		if (!isObject(item) || item.role !== 'user' || (item.type !== undefined && item.type !== 'message'))
			return `\`input[${i}]\`: steering takes only messages with the \`user\` role`
		const other = Object.keys(item).find((k) => k !== 'type' && k !== 'role' && k !== 'content')
		if (other) return `\`input[${i}]\`: a steering message takes only \`type\`, \`role\` and \`content\`, not \`${other}\``
		const content = item.content
		if (typeof content === 'string') continue
		if (!Array.isArray(content) || content.length === 0 || content.some((p) => !isObject(p) || !PARTS.has(String(p.type))))
			return `\`input[${i}].content\` must be a string or a list of \`input_text\`, \`input_image\` and \`input_file\` parts`
	}
	return undefined
}

/** A steering input as items: a string is one user message. */
export const steerItems = (input: unknown): unknown[] =>
	typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : (input as unknown[]).map((m) => ({ type: 'message', ...(m as object) }))

/** The output item types the client answers (its tools, its approvals): the stub of what it owes for each. */
const OWED: Record<string, (item: Record<string, unknown>) => Record<string, unknown> | undefined> = {
	function_call: (i) => ({ type: 'function_call_output', call_id: i.call_id, name: i.name }),
	custom_tool_call: (i) => ({ type: 'custom_tool_call_output', call_id: i.call_id }),
	computer_call: (i) => ({ type: 'computer_call_output', call_id: i.call_id }),
	shell_call: (i) => ({ type: 'shell_call_output', call_id: i.call_id }),
	local_shell_call: (i) => ({ type: 'function_call_output', call_id: i.call_id, name: 'local_shell' }),
	apply_patch_call: (i) => ({ type: 'apply_patch_call_output', call_id: i.call_id }),
	tool_search_call: (i) => (i.execution === 'client' ? { type: 'tool_search_output', call_id: i.call_id, execution: 'client' } : undefined),
	mcp_approval_request: (i) => ({ type: 'mcp_approval_response', approval_request_id: i.id }),
}

/**
 * What a finished response waits for from the client (OpenAI's `required_input` stubs: identifying fields only, the
 * client fills in the results), in output order; empty when it waits for nothing.
 * @example requiredInput([{ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' }])
 * // [{ type: 'function_call_output', call_id: 'call_1', name: 'get_weather' }]
 */
export function requiredInput(output: unknown[]): Record<string, unknown>[] {
	const owed: Record<string, unknown>[] = []
	for (const item of output) {
		const stub = isObject(item) && typeof item.type === 'string' ? OWED[item.type]?.(item) : undefined
		if (stub) owed.push(stub)
	}
	return owed
}

/** The settings a successor inherits: the steered response's request, less its input and what it continued. */
export function successorSettings(body: Record<string, unknown>): Record<string, unknown> {
	const { input: _input, previous_response_id: _previous, ...settings } = body
	return settings
}

/** `response.steer.accepted`. */
export const accepted = (s: Steer, seq: number) => JSON.stringify({ type: 'response.steer.accepted', sequence_number: seq, steer: { id: s.id, previous_response_id: s.target } })

/** `response.steer.pending`: the input stays queued while the response waits for what `required` names. */
export const pending = (s: Steer, required: unknown[], seq: number) =>
	JSON.stringify({ type: 'response.steer.pending', sequence_number: seq, reason: 'waiting_for_required_input', required_input: required, steer: { id: s.id, previous_response_id: s.target } })

/** `response.steer.failed`: the input handed back, with the steering id when one was given. */
export function failed(steer: { id?: string; target: unknown; input: unknown }, code: string, message: string, seq: number): string {
	return JSON.stringify({
		type: 'response.steer.failed',
		sequence_number: seq,
		steer: { ...(steer.id && { id: steer.id }), previous_response_id: steer.target ?? null, input: steer.input ?? null },
		error: { type: 'invalid_request_error', code, message },
	})
}
