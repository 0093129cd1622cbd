/**
 * What only the client's own vendor can take (core/ir.ts `VendorOnly`): Anthropic server tools
 * (`web_search_20250305`, `code_execution_…`, `web_fetch_…`) and Gemini built-in tools (`googleSearch`,
 * `codeExecution`, `urlContext`…) run on that vendor's servers, and an Anthropic `search_result` block has no form
 * another vendor reads. They reach the same protocol verbatim (through `extra`); an encoder of another protocol
 * refuses the request with a 400 naming them, since answering without the search or the content the caller sent
 * would be a silent loss (WIRE-NOTES #8).
 * @module
 */
import { GatewayError, unsupportedForModel } from '../core/errors'
import type { ChatRequest } from '../core/ir'
import type { ProtocolName } from './codec'

const VENDOR: Record<string, string> = { 'anthropic-messages': 'Anthropic', gemini: 'Gemini', 'gemini-interactions': 'Gemini', 'openai-chat': 'OpenAI', 'openai-responses': 'OpenAI' }

/**
 * Throws when the request carries something only its client's vendor can take and `target` is another protocol.
 * Retryable, so the failover loop moves on to a channel of the model that speaks the client's protocol; the caller
 * gets this 400 when none does.
 * @example refuseVendorOnly({ model: 'gpt-m', messages: [], stream: false, vendorOnly: [{ protocol: 'gemini', what: 'built-in tool googleSearch', path: 'tools[0].googleSearch' }] }, 'openai-chat')
 * // throws 400 "tools[0].googleSearch: built-in tool googleSearch is only available on Gemini's API, …"
 */
export function refuseVendorOnly(req: ChatRequest, target: ProtocolName): void {
	const v = req.vendorOnly?.find((h) => h.protocol !== target)
	if (!v) return
	const vendor = VENDOR[v.protocol] ?? v.protocol
	if (v.lost)
		// As the vendor answers for state it no longer keeps (Anthropic: 404 thread_not_found, on which its SDK replays
		// the whole conversation), not a 400 the caller cannot recover from. Retryable and not the channel's fault
		// (`unsupported_for_model`), like the refusal below: a channel of the vendor that keeps it may serve the model.
		throw new GatewayError('not_found', `${v.path}: model "${req.model}" is served by ${VENDOR[target] ?? target} here, which keeps no ${v.what}: send the whole conversation without it`, {
			code: 'unsupported_for_model',
			retryable: true,
			param: v.path,
			details: { error_code: v.lost },
		})
	throw unsupportedForModel(
		`${v.path}: ${v.what} is only available on ${vendor}'s API, and model "${req.model}" is served by ${VENDOR[target] ?? target} here: remove it, or use a model served by ${vendor}`,
		true,
		v.path,
	)
}
