/**
 * Reading a Gemini batch (`POST /v1beta/models/{model}:batchGenerateContent` with `{batch: {displayName, inputConfig:
 * {requests: {requests: [{request, metadata}]}}}}`, ai.google.dev/api/batch-mode), bounding what it can cost at batch
 * prices so the whole batch is held before the upstream runs it, and the body the channel gets (the model under its
 * name there). Input from the Files API (`inputConfig.fileName`: a JSONL file of `{key, request}` lines, uploaded through
 * the gateway) is read from the bytes kept as it passed and bounded line by line as the inline requests are (`fileRequests`).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { type Price, upperBound } from '../../billing/pricing'
import { GatewayError } from '../../core/errors'
import { defaultOutputCap } from '../../core/reasoning'
import { gemini } from '../../protocols/gemini'
import { type Route, resolveModel } from '../../relay/budget'
import { boundInputTokens } from '../../relay/estimate'
import { type MediaTarget, mediaRuleFor } from '../../relay/image-tokens'
import type { Services } from '../../services'
import { jsonLines } from '../../lib/json-lines'
import { isObject } from '../../core/json'

type Obj = Record<string, unknown>
export type GeminiBatch = { displayName?: unknown; batch: Obj; requests: Array<{ request: Obj; metadata?: unknown }>; fileName?: string }

const refuse = (message: string, param?: string) => new GatewayError('invalid_request', message, { code: 'invalid_request', param })
/** A request's `model`, as the SDK writes it (`models/…`) or bare. */
const bare = (m: string) => m.replace(/^models\//, '')

/**
 * The batch's inline requests, or the uploaded file it names (`inputConfig.fileName`, its requests read later:
 * `fileRequests`); a 400 naming the field for a batch with neither, or for a request naming another model than the
 * URL's (a batch runs one model).
 */
export function parseBatch(body: unknown, model: string): GeminiBatch {
	const batch = isObject(body) ? body.batch : undefined
	if (!isObject(batch)) throw refuse("batch: required (`{batch: {displayName, inputConfig: {requests: {requests: [...]}}}}`)", 'batch')
	const input = isObject(batch.inputConfig) ? batch.inputConfig : isObject(batch.input_config) ? batch.input_config : undefined
	const fileName = input?.fileName ?? input?.file_name
	if (fileName !== undefined) {
		if (typeof fileName !== 'string' || !fileName || input?.requests !== undefined)
			throw refuse('batch.inputConfig.fileName: the name of an uploaded JSONL file (`files/{id}`), and no inline requests beside it', 'batch.inputConfig.fileName')
		return { displayName: batch.displayName, batch, requests: [], fileName }
	}
	const list = isObject(input?.requests) ? input.requests.requests : undefined
	if (!Array.isArray(list) || !list.length) throw refuse('batch.inputConfig.requests.requests: at least one inline request is required', 'batch.inputConfig.requests')
	const requests = list.map((r, i) => {
		if (!isObject(r) || !isObject(r.request)) throw refuse(`batch.inputConfig.requests.requests[${i}].request: required`, 'batch.inputConfig.requests')
		checkModel(r.request, model, `batch.inputConfig.requests.requests[${i}].request.model`)
		return { request: r.request, metadata: r.metadata }
	})
	return { displayName: batch.displayName, batch, requests }
}

function checkModel(request: Obj, model: string, where: string) {
	const m = request.model
	if (m !== undefined && (typeof m !== 'string' || bare(m) !== model)) throw refuse(`${where}: "${String(m)}" is not the batch's model "${model}"; a batch runs one model`, 'batch.inputConfig.requests')
	// The gateway's context caches (modules/gemini-caches) are its own: Google, which runs the batch, knows none of them.
	if ((request.cachedContent ?? request.cached_content) !== undefined)
		throw refuse(`${where.replace(/\.model$|, request\.model$/, '')}: cachedContent is not served in Batch Mode (the gateway keeps its context caches itself); put the cached contents in the request`, 'cachedContent')
}

/**
 * The requests of a batch input file (ai.google.dev/gemini-api/docs/batch-mode: JSON Lines, each `{"key": …,
 * "request": GenerateContentRequest}`), as inline requests with their key as metadata; a 400 naming the line for one
 * that is not such an object, or that names another model.
 */
export function fileRequests(text: string, model: string): GeminiBatch['requests'] {
	const out: GeminiBatch['requests'] = []
	for (const { n, value: line } of jsonLines(text, (n) => refuse(`Line ${n} of the batch input file is not valid JSON`, 'batch.inputConfig.fileName'))) {
		if (!isObject(line) || !isObject(line.request)) throw refuse(`Line ${n} of the batch input file must be {"key": …, "request": {…}}`, 'batch.inputConfig.fileName')
		checkModel(line.request, model, `Line ${n} of the batch input file, request.model`)
		out.push({ request: line.request, metadata: line.key })
	}
	if (!out.length) throw refuse('The batch input file has no requests', 'batch.inputConfig.fileName')
	return out
}

/** The model's route when a Gemini channel serves it; another vendor's model is a 400 saying so. */
export function geminiRoute(svc: Services, token: AuthToken, model: string): Route {
	const route = resolveModel(svc, token, model)
	if (!route.channels.some((c) => c.type === 'gemini'))
		throw refuse(`The model "${model}" is not served by a Gemini channel; a batch runs on Gemini's Batch Mode, for Gemini models only`, 'model')
	return route
}

/**
 * The most the requests can cost at `price` (batch prices), micro-USD: each one's input bound (its tokens as a
 * synchronous call reserves them, or a token per byte of it, whichever is more) plus its output cap
 * (`maxOutputTokens`, which Gemini's thinking counts against, else the model's maximum or the gateway's default) for
 * each candidate, every token at the dearest kind the model prices.
 */
export function batchBound(b: GeminiBatch, price: Price, targets: MediaTarget[]): number {
	const enc = new TextEncoder()
	let total = 0
	for (const { request } of b.requests) {
		const bytes = enc.encode(JSON.stringify(request)).byteLength
		let input = bytes
		let reasoning
		// The cap and candidates as the codec reads them, as Google does: `generation_config` too, and of both spellings
		// the one written last (the SDK writes an empty `generationConfig` beside one given in `extraBody`).
		let asked: number | undefined
		let n = 1
		try {
			const ir = gemini.decodeRequest(request as never)
			// Images and pages as the models that may run the batch count them (relay/image-tokens.ts).
			input = Math.max(bytes, boundInputTokens(ir, undefined, mediaRuleFor(targets, ir)))
			reasoning = ir.reasoning
			asked = ir.maxTokens
			n = ir.choices ?? 1
		} catch {
			// A request the codec refuses is refused by Gemini too (an error response, not billed): its bytes bound it.
		}
		const cap = asked ?? price.maxOutputTokens ?? defaultOutputCap(reasoning)
		total += upperBound(input, cap * n, price)
	}
	return total
}

/**
 * The batch's body for a channel: each request's model (when it names one) under the channel's name for it; a file
 * input names the vendor's file (`fileName`), the file itself sent as it is.
 */
export function upstreamBody(b: GeminiBatch, upstreamModel: string, vendorFile?: string): Obj {
	if (vendorFile !== undefined) {
		const { input_config: _, ...batch } = b.batch
		return { batch: { ...batch, ...(batch.model === undefined ? {} : { model: `models/${upstreamModel}` }), inputConfig: { fileName: vendorFile } } }
	}
	const requests = b.requests.map((r) => (r.request.model === undefined ? r : { ...r, request: { ...r.request, model: `models/${upstreamModel}` } }))
	const { input_config: _, ...batch } = b.batch
	return { batch: { ...batch, ...(batch.model === undefined ? {} : { model: `models/${upstreamModel}` }), inputConfig: { requests: { requests } } } }
}
