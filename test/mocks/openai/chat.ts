/**
 * POST /v1/chat/completions, non-stream and stream (platform.openai.com/docs/api-reference/chat).
 * Reasoning is returned DeepSeek-style as `reasoning_content`; usage is in `completion_tokens_details`.
 * @module
 */

import { asArr, asNum, asObj, type Obj } from '../shared/json'
import { pieceLogprobs } from '../shared/logprobs'
import { frame, json, type JsonReply, sse, type Reply } from '../shared/reply'
import { plan, type Finish, type Plan } from '../shared/scenario'
import type { MockOptions } from '../shared/types'
import { fragments, splitPieces, stableId, unixNow } from '../shared/text'
import { checkJsonMode, checkMessages, readChat } from './chat-read'
import { servedTier } from './service-tier'
import { checkFunctionName, checkModel, checkUser, openaiError, requireObject } from './errors'
import { checkMaxTokens, checkReasoningEffort, checkReasoningObject, checkSampling } from './reasoning-models'
import { checkStrictFormat, checkStrictTools } from './strict-schema'
import { checkReasoningPassedBack, deepseekThinks, isDeepSeek } from './deepseek-thinking'

/**
 * Mistral's rule for tool call ids, in its words and error shape (its API and its chat templates): nine letters or
 * digits, in the assistant's calls and in the results that answer them.
 */
function checkAlnum9Ids(b: Obj): Reply | undefined {
	for (const m of asArr(b.messages).map(asObj)) {
		const ids = [...asArr(m?.tool_calls).map((c) => asObj(c)?.id), ...(m?.role === 'tool' ? [m.tool_call_id] : [])]
		const bad = ids.find((id) => typeof id !== 'string' || !/^[A-Za-z0-9]{9}$/.test(id))
		if (bad !== undefined) return json({ object: 'error', message: `Tool call id was ${String(bad)} but must be a-z, A-Z, 0-9, with a length of 9.`, type: 'invalid_function_call', param: null, code: '3280' }, 400)
	}
	return undefined
}

/** A refusal ends with `stop`: the refusal is told by the message's `refusal` field, not the finish reason. */
const FINISH: Record<Finish, string> = { stop: 'stop', stop_sequence: 'stop', length: 'length', tool_calls: 'tool_calls', refusal: 'stop' }

/**
 * Chat Completions usage: `prompt_tokens` includes the cached tokens and cache writes (`cache_write_tokens`, as GPT-5.6
 * and later report them), `completion_tokens` the reasoning ones. With
 * `n` choices the prompt counts once and the completion tokens of every choice add up ("you will be charged based on
 * the number of generated tokens across all of the choices", the `n` parameter's documentation).
 */
function usageOf(p: Plan, n = 1): Obj {
	const u = p.usage
	return {
		prompt_tokens: u.input,
		completion_tokens: u.output * n,
		total_tokens: u.input + u.output * n,
		prompt_tokens_details: { cached_tokens: u.cached, audio_tokens: u.audioInput ?? 0, ...(u.cacheWrite && { cache_write_tokens: u.cacheWrite }) },
		completion_tokens_details: { reasoning_tokens: u.reasoning * n, audio_tokens: (u.audioOutput ?? 0) * n, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
	}
}

/** Deterministic tool-call ids, derived from the conversation so a test can predict them. */
const callId = (seed: string, i: number): string => stableId('call_', `${seed}|${i}`)

/**
 * A search model's citations (platform.openai.com/docs/guides/tools-web-search?api-mode=chat): with `web_search_options`
 * and `#search` in the last user text, the answer cites one page, a `url_citation` spanning the answer from
 * `#cited-tail` on (else all of it), its indices characters of the message's content: code points, as OpenAI's
 * Python SDK slices `content[start_index:end_index]`.
 */
function annotationsOf(b: Obj, lastUserText: string, p: Plan): Obj[] {
	if (!asObj(b.web_search_options) || !lastUserText.includes('#search') || p.calls.length > 0 || p.finish === 'refusal') return []
	const start = [...p.text.slice(0, Math.max(0, p.text.indexOf('#cited-tail')))].length
	return [{ type: 'url_citation', url_citation: { start_index: start, end_index: [...p.text].length, url: 'https://example.com/page-1', title: 'Page 1' } }]
}

/** Only the search models take `web_search_options`; OpenAI answers any other model so (users report it verbatim). */
function checkWebSearchModel(b: Obj): JsonReply | undefined {
	if (b.web_search_options === undefined || /(^|[-/])search(-|$)/.test(String(b.model))) return undefined
	return openaiError(400, 'Web search options not supported with this model.', 'web_search_options')
}

function message(p: Plan, seed: string, annotations: Obj[] = []): Obj {
	const refused = p.finish === 'refusal'
	const msg: Obj = { role: 'assistant', content: refused || (p.calls.length > 0 && !p.text) ? null : p.text, refusal: refused ? p.text : null, annotations }
	if (p.thinking) msg.reasoning_content = p.thinking
	if (p.calls.length > 0) {
		msg.tool_calls = p.calls.map((c, i) => ({ id: callId(seed, i), type: 'function', function: { name: c.name, arguments: c.json } }))
	}
	return msg
}

/**
 * The tool-call deltas of one choice. Deltas are keyed by `tool_calls[].index` and the format does not order one call's
 * deltas before the next call's: with `interleave` (`#interleave` in the last user text) every call starts first, then
 * their argument fragments alternate 0, 1, 0, 1… (the QA report's upstream); otherwise each call is whole in turn.
 */
function callDeltas(p: Plan, seed: string, interleave: boolean): Obj[] {
	// First delta per call: index, id, type, name and empty arguments; then argument fragments by index only.
	const heads = p.calls.map((c, i) => ({ tool_calls: [{ index: i, id: callId(seed, i), type: 'function', function: { name: c.name, arguments: '' } }] }))
	const frags = p.calls.map((c, i) => fragments(c.json, 3).map((f) => ({ tool_calls: [{ index: i, function: { arguments: f } }] })))
	if (!interleave) return heads.flatMap((h, i) => [h, ...frags[i]!])
	const out: Obj[] = [...heads]
	for (let k = 0; frags.some((f) => k < f.length); k++) for (const f of frags) if (k < f.length) out.push(f[k]!)
	return out
}

function streamChunks(p: Plan, head: Obj, seed: string, includeUsage: boolean, n: number, interleave = false, top?: number, annotations: Obj[] = []): string[] {
	const chunks: string[] = []
	// With `logprobs: true` each content chunk carries the log probabilities of its own piece (`top` alternatives).
	const lp = top === undefined ? [] : pieceLogprobs(p.text, top)
	const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...new TextEncoder().encode(token)] })
	// With n > 1 each chunk names its choice by `index`; the choices follow one another here.
	for (let choice = 0; choice < n; choice++) {
		const push = (delta: Obj, finish: string | null = null, piece?: number) => {
			const t = piece === undefined ? undefined : lp[piece]
			const logprobs = t ? { content: [{ ...entry(t.token, t.logprob), top_logprobs: t.top.map((a) => entry(a.token, a.logprob)) }], refusal: null } : null
			const chunk: Obj = { ...head, choices: [{ index: choice, delta, logprobs, finish_reason: finish }] }
			if (includeUsage) chunk.usage = null
			chunks.push(frame(chunk))
		}
		// The first delta carries the role (OpenAI always sends it first, with empty content).
		const refused = p.finish === 'refusal'
		push({ role: 'assistant', content: p.calls.length > 0 || refused ? null : '', refusal: refused ? '' : null })
		for (const piece of splitPieces(p.thinking)) push({ content: null, reasoning_content: piece })
		// A refusal streams in the `refusal` field, in pieces like content.
		splitPieces(p.text).forEach((piece, i) => push(refused ? { refusal: piece } : { content: piece }, null, refused ? undefined : i))
		for (const delta of callDeltas(p, seed, interleave)) push(delta)
		// A search model's annotations come after the text, in a delta of their own (openai/openai-java#297).
		if (annotations.length) push({ annotations })
		push({}, FINISH[p.finish])
	}
	// With stream_options.include_usage: one extra chunk with `choices: []` before [DONE].
	if (includeUsage) chunks.push(frame({ ...head, choices: [], usage: usageOf(p, n) }))
	chunks.push('data: [DONE]\n\n')
	return chunks
}

/** `choices[].logprobs` with `logprobs: true` (whole answers; streams in streamChunks): the answer's pieces, `bytes` their UTF-8 bytes. */
function logprobsOf(p: Plan, top: number): Obj {
	const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...new TextEncoder().encode(token)] })
	return { content: pieceLogprobs(p.text, top).map((t) => ({ ...entry(t.token, t.logprob), top_logprobs: t.top.map((a) => entry(a.token, a.logprob)) })), refusal: null }
}

/** Handles a Chat Completions call whose auth already passed. */
export function chatCompletions(body: unknown, jsonError: boolean, models: string[] | undefined, alnum9Ids = false, prefix?: MockOptions['prefix']): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const invalid = checkModel(b.model, models) ?? checkStop(b) ?? checkUser(b.user) ?? checkToolNames(b.tools) ?? checkMessages(b.messages) ?? checkJsonMode(b) ?? checkStrictFormat(b) ?? checkStrictTools(b) ?? (alnum9Ids ? checkAlnum9Ids(b) : undefined) ?? checkReasoningEffort(b.model, b.reasoning_effort, 'reasoning_effort') ?? checkReasoningObject(b) ?? checkSampling(b, b.reasoning_effort) ?? checkMaxTokens(b) ?? checkWebSearchModel(b) ?? checkReasoningPassedBack(b)
	if (invalid) return invalid
	const n = asNum(b.n) ?? 1
	if (!Number.isInteger(n) || n < 1 || n > 128) return openaiError(400, `Invalid 'n': integer below minimum value. Expected a value >= 1 and <= 128, but got ${n} instead.`, 'n', 'integer_below_min_value')
	const conv = readChat(b, prefix !== undefined)
	if (isDeepSeek(b.model)) conv.thinking = deepseekThinks(b)
	const p = plan(conv)
	// Mistral's answer to a prefix starts with the prefix itself (docs.mistral.ai guides/prefix); DeepSeek's does not.
	if (prefix === 'echo' && conv.prefill !== undefined) p.text = conv.prefill + p.text
	const seed = `${conv.lastUserText}|${conv.inputTexts.length}`
	const id = stableId('chatcmpl-', seed)
	// Every chunk, and the completion, name the tier that served the request.
	const head = { id, object: 'chat.completion.chunk', created: unixNow(), model: b.model, service_tier: servedTier(b.service_tier, conv.inputTexts.join(' ')), system_fingerprint: 'fp_mock' }
	const annotations = annotationsOf(b, conv.lastUserText, p)
	if (b.stream === true) return sse(streamChunks(p, head, seed, asObj(b.stream_options)?.include_usage === true, n, conv.lastUserText.includes('#interleave'), b.logprobs === true ? (asNum(b.top_logprobs) ?? 0) : undefined, annotations), 1)
	return json({
		...head,
		object: 'chat.completion',
		choices: Array.from({ length: n }, (_, index) => ({ index, message: message(p, seed, annotations), logprobs: b.logprobs === true ? logprobsOf(p, asNum(b.top_logprobs) ?? 0) : null, finish_reason: FINISH[p.finish] })),
		usage: usageOf(p, n),
	})
}

/**
 * `stop` as OpenAI takes it: "Up to 4 sequences", and none on the reasoning models (o-series, gpt-5), with the API's
 * own 400s (continuedev/continue#2461, crewAIInc/crewAI#2738).
 */
function checkStop(b: Obj): JsonReply | undefined {
	if (b.stop === undefined || b.stop === null) return undefined
	if (/^(o\d|gpt-5)/.test(String(b.model))) return openaiError(400, "Unsupported parameter: 'stop' is not supported with this model.", 'stop', 'unsupported_parameter')
	const n = asArr(b.stop).length
	if (n > 4) return openaiError(400, `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${n} instead.`, 'stop', 'array_above_max_length')
}

/** Every function tool's name as OpenAI takes it. */
function checkToolNames(tools: unknown): JsonReply | undefined {
	for (const [i, t] of (Array.isArray(tools) ? tools : []).entries()) {
		const bad = checkFunctionName(asObj(asObj(t)?.function)?.name, `tools[${i}].function.name`)
		if (bad) return bad
	}
}
