/**
 * models/{model}:generateContent, :streamGenerateContent and :countTokens (ai.google.dev/api/generate-content).
 * Streams are `data:` frames separated by CRLF CRLF with `alt=sse` (no terminator: the last chunk carries the
 * finishReason), or one JSON array streamed element by element without it. `usageMetadata` rides on every chunk
 * with cumulative counts; thinking tokens are in `thoughtsTokenCount`, apart from `candidatesTokenCount`.
 * @module
 */

import { groundingFor } from './grounding'
import { withModalities } from './modalities'
import { asNum, asObj, pick, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { type MockLogprob, pieceLogprobs } from '../shared/logprobs'
import { inputTokens, plan, type Plan } from '../shared/scenario'
import { countWords, splitPieces, stableId, toolWords } from '../shared/text'
import { geminiError } from './errors'
import { asksImage, imageAnswer } from './image-out'
import { readGenerate } from './read'
import { checkContents, checkFunctionNames, checkStopSequences, checkJsonWithFunctions, checkSchemas, checkThinkingConfig, checkCandidateCount, checkSignatures, checkTextSignatures, checkToolConfig, textSignatureFor, thoughtSignatureFor } from './validate'

/** Usage after `candidates` answer tokens and `thoughts` thinking tokens (cumulative, like the API's chunks). */
function usageOf(p: Plan, candidates: number, thoughts: number, images: number): Obj {
	const toolUse = p.usage.toolUse ?? 0
	const u: Obj = { promptTokenCount: p.usage.input, candidatesTokenCount: candidates, totalTokenCount: p.usage.input + toolUse + candidates + thoughts }
	// What built-in tools fed back is apart from the prompt, in the total (`#tool-use`).
	if (toolUse > 0) u.toolUsePromptTokenCount = toolUse
	if (thoughts > 0) u.thoughtsTokenCount = thoughts
	// cachedContentTokenCount is part of promptTokenCount (not added to it).
	if (p.usage.cached > 0) u.cachedContentTokenCount = p.usage.cached
	// The prompt's modalities count its cached part too; `cacheTokensDetails` splits the cached part alone.
	const audioIn = (p.usage.audioInput ?? 0) + (p.usage.cachedAudio ?? 0)
	const details: Obj[] = [{ modality: 'TEXT', tokenCount: p.usage.input - images * 85 - audioIn }]
	if (images > 0) details.push({ modality: 'IMAGE', tokenCount: images * 85 })
	if (audioIn > 0) details.push({ modality: 'AUDIO', tokenCount: audioIn })
	u.promptTokensDetails = details
	if (p.usage.cachedAudio) u.cacheTokensDetails = [{ modality: 'AUDIO', tokenCount: p.usage.cachedAudio }]
	// The answer by modality (thoughts are not in it), cumulative like the counts: audio and image tokens come first.
	const audioOut = Math.min(p.usage.audioOutput ?? 0, candidates)
	const imageOut = Math.min(p.usage.imageOutput ?? 0, candidates - audioOut)
	if (audioOut + imageOut > 0) {
		const answer: Obj[] = [{ modality: 'TEXT', tokenCount: candidates - audioOut - imageOut }]
		if (audioOut > 0) answer.push({ modality: 'AUDIO', tokenCount: audioOut })
		if (imageOut > 0) answer.push({ modality: 'IMAGE', tokenCount: imageOut })
		u.candidatesTokensDetails = answer
	}
	return u
}

/**
 * The tier that served a request that names one (generateContent's `serviceTier`, an interaction's `service_tier`):
 * `flex`, or `priority` unless `#ramp` is in the request (over the dynamic priority limit a request "is downgraded to
 * standard processing instead of returning an error": ai.google.dev/gemini-api/docs/optimization), `standard`
 * otherwise. None for a request that names none. It is sent in the `x-gemini-service-tier` header (`tierHeaders`) and,
 * unless `#tier-header` is in the request, in the body too (`usageMetadata.serviceTier`, the Interaction's
 * `service_tier`), as @ai-sdk/google reads either.
 */
export function servedTier(asked: unknown, text: string): { served: string; inBody?: string } | undefined {
	if (asked === undefined || asked === null) return undefined
	const served = asked === 'priority' ? (text.includes('#ramp') ? 'standard' : 'priority') : asked === 'flex' ? 'flex' : 'standard'
	return text.includes('#tier-header') ? { served } : { served, inBody: served }
}

/** The response headers naming the tier that served the request, if it named one. */
export const tierHeaders = (tier: { served: string } | undefined): Record<string, string> | undefined => (tier ? { 'x-gemini-service-tier': tier.served } : undefined)

/** functionCall parts; Gemini 3 puts a `thoughtSignature` on the first call part of the turn only. */
const callParts = (p: Plan): Obj[] =>
	p.calls.map((c, i) => (i === 0 ? { functionCall: { name: c.name, args: c.args }, thoughtSignature: thoughtSignatureFor(c.name, c.args) } : { functionCall: { name: c.name, args: c.args } }))

/** Gemini has no refusal of its own: its safety stop is the nearest. */
const finishOf = (p: Plan): string => (p.finish === 'length' ? 'MAX_TOKENS' : p.finish === 'refusal' ? 'SAFETY' : 'STOP')

/**
 * The signature of an answer's text, when the model signs one: Gemini 3 models put a `thoughtSignature` on the text
 * part of an answer without function calls when they thought (ai.google.dev/gemini-api/docs/thought-signatures).
 */
const textSignature = (model: string, p: Plan): string | undefined =>
	model.startsWith('gemini-3') && p.thinking && p.calls.length === 0 ? textSignatureFor(p.text) : undefined

interface Head {
	modelVersion: string
	responseId: string
}

const chunk = (parts: Obj[], usage: Obj, head: Head, finishReason?: string): Obj => ({
	candidates: [{ content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 }],
	usageMetadata: usage,
	...head,
})

function streamChunks(p: Plan, head: Head, images: number, signature: string | undefined, top?: number): Obj[] {
	const out: Obj[] = []
	// With responseLogprobs every text chunk has the logprobsResult of its own piece (`top` alternatives).
	const lp = top === undefined ? [] : pieceLogprobs(p.text, top)
	let thoughts = 0
	for (const piece of splitPieces(p.thinking)) {
		thoughts += countWords(piece)
		out.push(chunk([{ text: piece, thought: true }], usageOf(p, 0, thoughts, images), head))
	}
	const final = usageOf(p, p.usage.output - p.usage.reasoning, p.usage.reasoning, images)
	if (p.calls.length > 0) {
		// Text said before the calls comes first, in its own chunk.
		if (p.text) out.push(chunk([{ text: p.text }], usageOf(p, countWords(p.text), p.usage.reasoning, images), head))
		// Gemini sends each functionCall whole (args as an object), never as fragments.
		out.push(chunk(callParts(p), final, head, finishOf(p)))
		return out
	}
	const pieces = splitPieces(p.text)
	let words = 0
	pieces.forEach((piece, i) => {
		words += countWords(piece)
		const last = i === pieces.length - 1
		const c = chunk([{ text: piece }], last ? final : usageOf(p, words, p.usage.reasoning, images), head, last && !signature ? finishOf(p) : undefined)
		const t = lp[i]
		if (t) (c.candidates as Obj[])[0]!.logprobsResult = logprobsEntry([t])
		out.push(c)
	})
	// A signed answer's stream ends with the signature alone on an empty text part.
	if (signature) out.push(chunk([{ text: '', thoughtSignature: signature }], final, head, finishOf(p)))
	else if (pieces.length === 0) out.push(chunk([{ text: '' }], final, head, finishOf(p)))
	return out
}

/** Which model and API version (`v1beta` or `v1`) a call addressed. */
export interface Target {
	model: string
	version: string
}

const modelNotFound = ({ model, version }: Target, method: string): Reply =>
	geminiError(
		404,
		`models/${model} is not found for API version ${version}, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
	)

/** `candidates[].logprobsResult` with `responseLogprobs`: the given pieces and their alternatives. */
function logprobsEntry(lp: MockLogprob[]): Obj {
	const entry = (token: string, logProbability: number) => ({ token, tokenId: token.length, logProbability })
	return { topCandidates: lp.map((t) => ({ candidates: t.top.map((a) => entry(a.token, a.logprob)) })), chosenCandidates: lp.map((t) => entry(t.token, t.logprob)) }
}

/**
 * A chunk (or whole answer) with `n` candidates (`generationConfig.candidateCount`): the same answer under indexes
 * 0…n-1, and usage that counts every candidate's tokens (the prompt once).
 */
function withCandidates(c: Obj, n: number): Obj {
	if (n <= 1) return c
	const [first] = c.candidates as Obj[]
	const u = { ...(c.usageMetadata as Obj) }
	const answer = (asNum(u.candidatesTokenCount) ?? 0) * n
	const thoughts = (asNum(u.thoughtsTokenCount) ?? 0) * n
	u.candidatesTokenCount = answer
	if (u.thoughtsTokenCount !== undefined) u.thoughtsTokenCount = thoughts
	u.totalTokenCount = (asNum(u.promptTokenCount) ?? 0) + answer + thoughts
	return { ...c, candidates: Array.from({ length: n }, (_, index) => ({ ...first, index })), usageMetadata: u }
}

/** generateContent / streamGenerateContent for `model`; `sse` selects SSE framing for the stream. */
export function generate(target: Target, body: unknown, jsonError: boolean, stream: boolean, sse: boolean, models: string[] | undefined): Reply {
	if (jsonError || !asObj(body)) return geminiError(400, 'Invalid JSON payload received. Unexpected token.')
	const b = body as Obj
	const model = target.model
	if (models && !models.includes(model)) return modelNotFound(target, stream ? 'streamGenerateContent' : 'generateContent')
	const contents = Array.isArray(b.contents) ? b.contents.map((c) => asObj(c) ?? {}) : []
	const bad = checkContents(b.contents) ?? checkStopSequences(b) ?? checkFunctionNames(b.tools) ?? checkSchemas(b.tools) ?? checkToolConfig(b) ?? checkJsonWithFunctions(model, b) ?? checkThinkingConfig(model, b) ?? checkCandidateCount(b) ?? checkSignatures(contents) ?? checkTextSignatures(contents)
	if (bad) return bad
	const conv = readGenerate(b)
	if (!stream && asksImage(model, b)) return imageAnswer(model, b, conv)
	const p = plan(conv)
	const head: Head = { modelVersion: model, responseId: stableId('', `${conv.lastUserText}|${conv.inputTexts.length}`, 22) }
	const signature = textSignature(model, p)
	const n = asNum((asObj(b.generationConfig) ?? {}).candidateCount) ?? 1
	const grounding = groundingFor(b.tools, conv.lastUserText, p.text)
	const served = servedTier(b.serviceTier ?? b.service_tier, conv.lastUserText)
	if (!stream) {
		const answer = signature ? { text: p.text, thoughtSignature: signature } : { text: p.text }
		const parts = [...(p.thinking ? [{ text: p.thinking, thought: true }] : []), ...(p.calls.length > 0 ? [...(p.text ? [answer] : []), ...callParts(p)] : [answer])]
		const whole = chunk(parts, usageOf(p, p.usage.output - p.usage.reasoning, p.usage.reasoning, conv.images), head, finishOf(p))
		if (served?.inBody) whole.usageMetadata = { ...(whole.usageMetadata as Obj), serviceTier: served.inBody }
		const cfg = asObj(b.generationConfig) ?? {}
		if (cfg.responseLogprobs === true) (whole.candidates as Obj[])[0]!.logprobsResult = logprobsEntry(pieceLogprobs(p.text, asNum(cfg.logprobs) ?? 0))
		if (grounding) (whole.candidates as Obj[])[0]!.groundingMetadata = grounding
		return json(withCandidates(withModalities(whole, cfg, conv.lastUserText), n), 200, tierHeaders(served))
	}
	const cfg = asObj(b.generationConfig) ?? {}
	const parts = streamChunks(p, head, conv.images, signature, cfg.responseLogprobs === true ? (asNum(cfg.logprobs) ?? 0) : undefined)
	if (served?.inBody) for (const c of parts) c.usageMetadata = { ...(c.usageMetadata as Obj), serviceTier: served.inBody }
	// Streamed, the grounding rides on the last chunks, each resending all of it (langchain-ai/langchainjs#11456).
	if (grounding) for (const c of parts.slice(-2)) (c.candidates as Obj[])[0]!.groundingMetadata = grounding
	const chunks = parts.map((c) => JSON.stringify(withCandidates(c, n)))
	// The last chunk (with finishReason) is the stream's only "terminator": a cut never sends it.
	const headers = tierHeaders(served)
	if (sse) return { type: 'stream', status: 200, contentType: 'text/event-stream', chunks: chunks.map((c) => `data: ${c}\r\n\r\n`), tail: 1, headers }
	const elements = chunks.map((c, i) => (i === 0 ? `[${c}` : `\r\n,${c}`))
	return { type: 'stream', status: 200, contentType: 'application/json; charset=UTF-8', chunks: [...elements, ']'], tail: 2, headers }
}

/** The function declarations of a request's tools, as `toolWords` counts them (`parameters` or `parametersJsonSchema`). */
function declarations(tools: unknown): Array<{ name?: unknown; description?: unknown; schema?: unknown }> {
	const out: Array<{ name?: unknown; description?: unknown; schema?: unknown }> = []
	for (const t of Array.isArray(tools) ? tools : []) {
		const decls = pick(asObj(t) ?? {}, 'functionDeclarations', 'function_declarations')
		for (const d of Array.isArray(decls) ? decls : []) {
			const f = asObj(d) ?? {}
			out.push({ name: f.name, description: f.description, schema: f.parameters ?? pick(f, 'parametersJsonSchema', 'parameters_json_schema') })
		}
	}
	return out
}

/** countTokens: `{ contents }` or `{ generateContentRequest }` → `{ totalTokens, promptTokensDetails }`. */
export function countTokens(target: Target, body: unknown, jsonError: boolean, models: string[] | undefined, countTools = false): Reply {
	if (jsonError || !asObj(body)) return geminiError(400, 'Invalid JSON payload received. Unexpected token.')
	if (models && !models.includes(target.model)) return modelNotFound(target, 'countTokens')
	const b = body as Obj
	const inner = asObj(pick(b, 'generateContentRequest', 'generate_content_request')) ?? b
	const bad = checkContents(inner.contents) ?? checkFunctionNames(inner.tools)
	if (bad) return bad
	const conv = readGenerate(inner)
	const total = inputTokens(conv) + (countTools ? toolWords(declarations(inner.tools)) : 0)
	const details: Obj[] = [{ modality: 'TEXT', tokenCount: total - conv.images * 85 }]
	if (conv.images > 0) details.push({ modality: 'IMAGE', tokenCount: conv.images * 85 })
	return json({ totalTokens: total, promptTokensDetails: details })
}
