/**
 * POST /v1/completions, OpenAI's legacy text completions (platform.openai.com/docs/api-reference/completions/create):
 * a `text_completion` object whose `choices[]` carry `text`, `index`, `logprobs` and `finish_reason`, one per prompt × `n`
 * (prompt-major); streamed, `text_completion` chunks with the text in pieces, `data: [DONE]` at the end and, with
 * `stream_options.include_usage`, one chunk `choices: []` with the usage before it (the others `"usage":null`).
 *
 * The answer to a prompt is ` Completed: <prompt>` (the suffix, when given, appended) cut to `max_tokens` words, 16
 * when unset (OpenAI's default), finish `length` when cut. `echo` prefixes the prompt. Usage: prompt words (+ suffix)
 * per prompt as `prompt_tokens`, answer words × `best_of` (or `n`) as `completion_tokens`. Chat-only models (`gpt-4o*`,
 * `gpt-4.1*`) answer OpenAI's 404 for them; a model named `*-nousage` reports no usage at all, as some
 * OpenAI-compatible servers do (ignoring `stream_options`).
 * @module
 */

import { asNum, asObj, asStr, type Obj } from '../shared/json'
import { frame, json, type Reply, sse } from '../shared/reply'
import { countWords, splitPieces, stableId, unixNow } from '../shared/text'
import { checkModel, openaiError, requireObject } from './errors'

const LEGACY_DEFAULT_MAX_TOKENS = 16

/** The prompts of a request: a string, strings, one token array or token arrays (tokens shown as `t<id>`). */
function promptsOf(p: unknown): string[] | undefined {
	if (p === undefined || p === null) return ['']
	if (typeof p === 'string') return [p]
	if (!Array.isArray(p) || p.length === 0) return undefined
	if (p.every((x) => typeof x === 'string')) return p as string[]
	const tokens = (a: unknown) => (Array.isArray(a) && a.every((x) => typeof x === 'number') ? a.map((x) => `t${x}`).join(' ') : undefined)
	if (p.every((x) => typeof x === 'number')) return [tokens(p)!]
	const all = p.map(tokens)
	return all.every((x) => x !== undefined) ? (all as string[]) : undefined
}

export function completions(body: unknown, jsonError: boolean, models: string[] | undefined): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const invalid = checkModel(b.model, models)
	if (invalid) return invalid
	const model = b.model as string
	if (/^gpt-4(o|\.1)/.test(model))
		return openaiError(404, 'This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?', 'model', null, 'invalid_request_error')
	const prompts = promptsOf(b.prompt)
	if (!prompts) return openaiError(400, "Invalid type for 'prompt'.", 'prompt', 'invalid_type')
	const n = asNum(b.n) ?? 1
	const bestOf = asNum(b.best_of) ?? n
	if (bestOf < n) return openaiError(400, 'best_of must be greater than or equal to n.', 'best_of', null)
	if (b.stream === true && bestOf > 1 && b.best_of !== undefined) return openaiError(400, 'Cannot stream results with best_of > 1.', 'best_of', null)
	const max = asNum(b.max_tokens) ?? LEGACY_DEFAULT_MAX_TOKENS
	const suffix = asStr(b.suffix) ?? ''
	const answers = prompts.map((prompt) => {
		const words = `Completed: ${prompt}${suffix ? ` ${suffix}` : ''}`.split(/\s+/).filter(Boolean)
		const cut = words.length > max
		const text = ` ${words.slice(0, max).join(' ')}`
		return { text: b.echo === true ? prompt + text : text, words: Math.min(words.length, max), finish: cut ? 'length' : 'stop' }
	})
	const usage = {
		prompt_tokens: prompts.reduce((s, p) => s + countWords(p) + countWords(suffix), 0),
		completion_tokens: answers.reduce((s, a) => s + a.words, 0) * bestOf,
		total_tokens: 0,
	}
	usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
	const reports = !model.endsWith('-nousage')
	const head = { id: stableId('cmpl-', `${model}|${prompts.join('|')}`), object: 'text_completion', created: unixNow(), model }
	const choices = answers.flatMap((a, p) => Array.from({ length: n }, (_, k) => ({ index: p * n + k, ...a })))
	if (b.stream === true) {
		const includeUsage = reports && asObj(b.stream_options)?.include_usage === true
		const chunks: string[] = []
		const push = (c: Obj) => chunks.push(frame(includeUsage ? { ...c, usage: null } : c))
		for (const c of choices) {
			for (const piece of splitPieces(c.text)) push({ ...head, choices: [{ text: piece, index: c.index, logprobs: null, finish_reason: null }] })
			push({ ...head, choices: [{ text: '', index: c.index, logprobs: null, finish_reason: c.finish }] })
		}
		if (includeUsage) chunks.push(frame({ ...head, choices: [], usage }))
		chunks.push('data: [DONE]\n\n')
		return sse(chunks, 1)
	}
	return json({
		...head,
		system_fingerprint: 'fp_mock',
		choices: choices.map((c) => ({ text: c.text, index: c.index, logprobs: null, finish_reason: c.finish })),
		...(reports ? { usage } : {}),
	})
}
