/**
 * Custom (freeform) tools (`{type: "custom", name, description, format}`): a client's own tool whose input is free
 * text, plain or under a grammar, called with `custom_tool_call` items carrying `input` and answered with
 * `custom_tool_call_output` (https://platform.openai.com/docs/guides/function-calling#custom-tools). Codex CLI declares
 * its `apply_patch` so, and since 0.171 in no other way. Other vendors have only JSON functions, so such a tool goes
 * to them as a function taking one string, `input` (its grammar in the description), and the vendor's calls of it come
 * back to the client as `custom_tool_call` items with that string (modules/responses/custom-calls.ts).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { Tool } from '../../core/ir'
import { isObject, optString, reqString, str, type Json } from '../openai-chat/guards'

/** The one argument of the function a custom tool goes upstream as. */
export const CUSTOM_INPUT = 'input'

/** A custom tool → the function other vendors are offered in its place. */
export function customToolFunction(tool: Json, at: string): Tool {
	const name = reqString(tool.name, `${at}.name`)
	if (!name) throw badRequest(`${at}.name must not be empty`, `${at}.name`)
	const format = isObject(tool.format) ? tool.format : undefined
	const grammar = format?.type === 'grammar' ? `Raw text in the ${str(format.syntax) ?? ''} grammar below (not JSON, not quoted):\n${str(format.definition) ?? ''}` : 'Raw free text (not JSON).'
	const description = optString(tool.description, `${at}.description`)
	return {
		name,
		...(description && { description }),
		parameters: { type: 'object', properties: { [CUSTOM_INPUT]: { type: 'string', description: `The tool's whole input. ${grammar}` } }, required: [CUSTOM_INPUT] },
	}
}

/**
 * The names of the request's custom tools (none: undefined).
 * @example customToolNames([{ type: 'custom', name: 'apply_patch' }, { type: 'function', name: 'ls' }]) // Set { 'apply_patch' }
 */
export function customToolNames(tools: unknown): Set<string> | undefined {
	let out: Set<string> | undefined
	if (Array.isArray(tools)) for (const t of tools) if (isObject(t) && t.type === 'custom' && typeof t.name === 'string') (out ??= new Set()).add(t.name)
	return out
}

/** A vendor's arguments for a custom tool's function → the tool's input (arguments that are not `{input: string}`: as written). */
export function customInputOf(args: string): string {
	try {
		const v: unknown = JSON.parse(args)
		if (isObject(v) && typeof v[CUSTOM_INPUT] === 'string') return v[CUSTOM_INPUT]
	} catch {
		// Not JSON: the vendor wrote the input itself.
	}
	return args
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }

/** Where the reading of a streamed `{"input": "…` stands: the arguments so far, and how far they were read. */
export type CustomInputReader = { json: string; at: number; closed: boolean }

export const customInputReader = (): CustomInputReader => ({ json: '', at: -1, closed: false })

/**
 * The vendor's next argument fragment → the next piece of the tool's input, for the stream's
 * `custom_tool_call_input.delta` events: up to the last whole character (each byte read once); '' for arguments of
 * another shape, whose input the `done` event gives whole.
 * @example customInputDelta(customInputReader(), '{"input":"*** Begin\\nA') === '*** Begin\nA'
 */
export function customInputDelta(r: CustomInputReader, fragment: string): string {
	r.json += fragment
	if (r.at < 0) {
		const start = /^\s*\{\s*"input"\s*:\s*"/.exec(r.json)
		if (!start) return ''
		r.at = start[0].length
	}
	let out = ''
	const json = r.json
	while (!r.closed && r.at < json.length) {
		const c = json[r.at]!
		if (c === '"') r.closed = true
		else if (c !== '\\') {
			out += c
			r.at++
		} else {
			const e = json[r.at + 1]
			if (e === undefined) break
			if (e === 'u') {
				const hex = json.slice(r.at + 2, r.at + 6)
				if (!/^[0-9a-fA-F]{4}$/.test(hex)) break
				out += String.fromCharCode(parseInt(hex, 16))
				r.at += 6
			} else {
				out += ESCAPES[e] ?? e
				r.at += 2
			}
		}
	}
	return out
}
