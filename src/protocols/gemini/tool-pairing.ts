/**
 * Gemini's function-call pairing: the turn after a model turn with N functionCall parts, when it answers, answers with
 * N functionResponse parts in one content. Contents holding only responses are joined first, as the fast path sends
 * them (LangChain JS sends one per tool message); what still breaks the rule is refused in Gemini's words when the
 * request goes to another vendor, whose refusal would name its own fields.
 * @module
 */
import { badRequest, type GatewayError } from '../../core/errors'
import type { GeminiRequest } from './model'
import { get, isObj, type Obj } from './read'

const onlyFunctionResponses = (c: unknown): c is Obj & { parts: unknown[] } =>
	isObj(c) && c.role !== 'model' && Array.isArray(c.parts) && c.parts.length > 0 && c.parts.every((p) => isObj(p) && ('functionResponse' in p || 'function_response' in p))

/**
 * Consecutive contents holding only functionResponse parts, joined into one: Gemini answers the turn after N parallel
 * functionCall parts only when one content carries the N responses ("Please ensure that the number of function
 * response parts is equal to the number of function call parts of the function call turn"), and LangChain JS sends one
 * content per ToolMessage (cf. pydantic/pydantic-ai#580, docker/docker-agent#2959).
 * @returns undefined when no two such contents follow each other
 */
export function joinedFunctionResponses(contents: unknown): unknown[] | undefined {
	if (!Array.isArray(contents)) return undefined
	let out: unknown[] | undefined
	for (let i = 1; i < contents.length; i++) {
		const prev = (out ?? contents)[out ? out.length - 1 : i - 1]
		const cur = contents[i]
		if (onlyFunctionResponses(prev) && onlyFunctionResponses(cur)) {
			out ??= contents.slice(0, i)
			out[out.length - 1] = { ...prev, parts: [...prev.parts, ...cur.parts] }
		} else out?.push(cur)
	}
	return out
}

/** How many parts of a content carry `kind` (either spelling). */
function count(content: unknown, kind: 'functionCall' | 'functionResponse'): number {
	const parts = isObj(content) ? get(content, 'parts') : undefined
	if (!Array.isArray(parts)) return 0
	let n = 0
	for (const p of parts) if (isObj(p) && get(p, kind) !== undefined) n++
	return n
}

/**
 * Gemini's refusal when an answering turn, its response-only contents joined, holds another number of function
 * responses than the calls it answers, or undefined. A turn with no function response is left to the vendor.
 * @example unpairedTools({ contents: [{ role: 'model', parts: [{ functionCall: { name: 'f' } }] }, { role: 'user', parts: [{ text: 'x' }] }] }) === undefined
 */
export function unpairedTools(body: GeminiRequest): GatewayError | undefined {
	const given = get(body as Obj, 'contents')
	const contents = joinedFunctionResponses(given) ?? given
	if (!Array.isArray(contents)) return undefined
	for (let i = 0; i + 1 < contents.length; i++) {
		const calls = count(contents[i], 'functionCall')
		const responses = count(contents[i + 1], 'functionResponse')
		if (calls > 0 && responses > 0 && calls !== responses)
			return badRequest('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.')
	}
	return undefined
}
