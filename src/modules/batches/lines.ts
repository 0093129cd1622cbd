/**
 * Reading a batch input file (platform.openai.com/docs/guides/batch: one JSON object a line,
 * `{custom_id, method: "POST", url, body}`, every `url` the batch's endpoint) and bounding what it can cost, so the
 * whole batch is reserved before the upstream runs it and the gateway never pays for more than it held.
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { type Price, upperBound } from '../../billing/pricing'
import { GatewayError } from '../../core/errors'
import { openaiChat } from '../../protocols/openai-chat'
import { openaiResponses } from '../../protocols/openai-responses'
import { DEFAULT_MAX_OUTPUT, resolveModel } from '../../relay/budget'
import { REFERENCED_FILE_TOKENS } from '../../relay/file-tokens'
import { boundInputTokens } from '../../relay/estimate'
import { type MediaRule, mediaRuleFor } from '../../relay/image-tokens'
import { type Channel, matchesModel } from '../../routing/catalog'
import type { Services } from '../../services'
import { countLineInput } from '../embeddings/count'
import { checkContinuation, checkItemReferences } from '../responses/ownership'
import { batchPrice } from './price'
import { jsonLines } from '../../lib/json-lines'
import { isObject } from '../../core/json'

/** The endpoints whose lines are priced by tokens here; OpenAI's others (moderations, images, videos) are refused. */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions'] as const
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number]

export type BatchLine = { customId: string; url: string; model: string; body: Record<string, unknown>; bytes: number }

const refuse = (message: string, code = 'invalid_batch_file', param: string | null = 'input_file_id') => new GatewayError('invalid_request', message, { code, param: param ?? undefined })

/** The file's lines; refuses (400, naming the line) one that is not a request with a model. */
export function parseLines(text: string): BatchLine[] {
	const out: BatchLine[] = []
	const seen = new Set<string>()
	const enc = new TextEncoder()
	for (const { n, value: line } of jsonLines(text, (n) => refuse(`Line ${n} of the input file is not valid JSON`))) {
		if (!isObject(line) || typeof line.custom_id !== 'string' || typeof line.url !== 'string' || !isObject(line.body)) throw refuse(`Line ${n} of the input file must be {custom_id, method, url, body}`)
		if (typeof line.body.model !== 'string' || !line.body.model) throw refuse(`Line ${n} of the input file has no body.model`)
		if (seen.has(line.custom_id)) throw refuse(`Line ${n} repeats custom_id '${line.custom_id}'; each must be unique`)
		seen.add(line.custom_id)
		out.push({ customId: line.custom_id, url: line.url, model: line.body.model, body: line.body, bytes: enc.encode(JSON.stringify(line.body)).byteLength })
	}
	if (!out.length) throw refuse('The input file has no requests')
	return out
}

/**
 * Checks every line's model: one the key may use, priced here, served by `ch` under its own name (a batch body is
 * sent as written, so a model the channel renames with `model_map` is refused rather than rewritten in the file).
 * Returns each model's price.
 */
export function checkModels(svc: Services, token: AuthToken, ch: Channel, lines: BatchLine[]): Map<string, Price> {
	const prices = new Map<string, Price>()
	for (const line of lines) {
		if (prices.has(line.model)) continue
		const route = resolveModel(svc, token, line.model)
		if (!route.channels.some((c) => c.id === ch.id) || !matchesModel(ch.models, line.model))
			throw refuse(`The model "${line.model}" (request '${line.customId}') is not served by the channel holding the input file`, 'model_not_found', 'model')
		const mapped = ch.modelMap[line.model]
		if (mapped !== undefined && mapped !== line.model)
			throw refuse(`The model "${line.model}" (request '${line.customId}') is served here as "${mapped}"; name that model in the batch file`, 'model_mapped', 'model')
		prices.set(line.model, route.price)
	}
	return prices
}

/**
 * Refuses (404, as POST /v1/responses does: responses/ownership.ts) a Responses line continuing a response or
 * conversation, or naming an item by `item_reference`, not answered to this account: a batch runs on the channel's
 * key, shared by every account, so OpenAI would otherwise answer it with another account's conversation.
 */
export async function checkContinuations(svc: Services, accountId: number, lines: BatchLine[]): Promise<void> {
	for (const line of lines)
		if (line.url === '/v1/responses') {
			await checkContinuation(svc, accountId, line.body)
			await checkItemReferences(svc, accountId, line.body)
		}
}

/** The output cap a line asks for, or the model's, or the gateway's default. */
function outputCap(line: BatchLine, p: Price): number {
	if (line.url === '/v1/embeddings') return 0
	const b = line.body
	const asked = [b.max_completion_tokens, b.max_tokens, b.max_output_tokens].find((v) => typeof v === 'number' && v >= 0) as number | undefined
	const cap = asked ?? p.maxOutputTokens ?? DEFAULT_MAX_OUTPUT
	const n = typeof b.n === 'number' && b.n > 1 ? Math.floor(b.n) : 1
	return cap * n
}

/**
 * A line's input bound: one token per byte of its body (a text token is at least a byte), or, when more, what a
 * synchronous request with that body reserves (relay/estimate.ts): an image or a file is a few bytes of reference
 * (a URL, a `file_id`) but hundreds or thousands of tokens upstream, bounded per image and per page as there. An
 * embeddings line is held as POST /v1/embeddings holds its body: its input's token count, which is all it is billed
 * for (a byte per token held several times what it could cost, and refused batches the balance covered).
 */
function inputBound(line: BatchLine): number {
	if (line.url === '/v1/embeddings') return countLineInput(line.body.input) ?? line.bytes
	const codec = line.url === '/v1/chat/completions' ? openaiChat : line.url === '/v1/responses' ? openaiResponses : undefined
	if (!codec) return line.bytes
	try {
		const ir = codec.decodeRequest(line.body as never)
		// Images as the line's model counts them (an OpenAI batch runs on OpenAI: relay/image-tokens.ts).
		const media = mediaRuleFor([{ type: 'openai', model: ir.model }], ir)
		const refs = line.url === '/v1/responses' ? storedReferences(line.body.input, media) : 0
		return Math.max(line.bytes, boundInputTokens(ir, undefined, media) + refs)
	} catch {
		// A body the codec refuses is refused by the upstream too (an error line, not billed): its bytes bound it.
		return line.bytes
	}
}

/**
 * Tokens of the Responses input parts that name OpenAI's file store (`input_file` and `input_image` by `file_id`): the
 * Responses decoder leaves them out (no other vendor could read them), so they are bounded here as a file or image the
 * gateway cannot see is for a chat request (relay/file-tokens.ts). A file by `file_url` is decoded, and counted there.
 */
function storedReferences(input: unknown, media: MediaRule): number {
	if (!Array.isArray(input)) return 0
	let n = 0
	for (const item of input) {
		const content = isObject(item) && Array.isArray(item.content) ? item.content : []
		for (const p of content) {
			if (!isObject(p)) continue
			if (p.type === 'input_file' && typeof p.file_data !== 'string' && typeof p.file_url !== 'string') n += REFERENCED_FILE_TOKENS
			else if (p.type === 'input_image' && typeof p.image_url !== 'string') n += media.image({ source: UNSEEN, detail: typeof p.detail === 'string' ? p.detail : undefined })
		}
	}
	return n
}

/** An image the gateway cannot see (an OpenAI file id): counted at the most its model counts for one image. */
const UNSEEN = { kind: 'url', url: '' } as const

/** The most the lines can cost at batch prices, micro-USD: each line's input bound plus its output cap. */
export function batchBound(lines: BatchLine[], prices: Map<string, Price>): number {
	let total = 0
	for (const line of lines) {
		const p = batchPrice(prices.get(line.model)!)
		total += upperBound(inputBound(line), outputCap(line, p), p)
	}
	return total
}
