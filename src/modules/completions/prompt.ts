/**
 * Token counts of a legacy completions request, for the reservation and for usage an upstream does not report. A
 * prompt is a string, strings, a token array or token arrays; several prompts are a batch, each answered with `n`
 * choices (`best_of` candidates generated) (platform.openai.com/docs/api-reference/completions/create).
 * @module
 */
import { boundText, countText } from '../../relay/estimate'
import type { CompletionRequest } from './model'

type Prompts = CompletionRequest['prompt']

/** The prompts of a batch, each a text or a token array. @example promptsOf([[1, 2], [3]]).length === 2 */
export function promptsOf(p: Prompts): Array<string | number[]> {
	if (p === null) return ['']
	if (typeof p === 'string') return [p]
	if (p.length > 0 && typeof p[0] === 'number') return [p as number[]]
	return p as Array<string | number[]>
}

/** Completions generated: per prompt `best_of` candidates (at least `n`). @example generated({ prompt: ['a', 'b'], n: 2 }) === 4 */
export function generated(body: Pick<CompletionRequest, 'prompt' | 'n' | 'best_of'>): number {
	return promptsOf(body.prompt).length * Math.max(body.n ?? 1, body.best_of ?? 1, 1)
}

/** Prompt tokens with `count` for texts (a token array counts its length), the suffix included once per prompt. */
function promptTokens(body: Pick<CompletionRequest, 'prompt' | 'suffix'>, count: (text: string) => number): number {
	const suffix = body.suffix ? count(body.suffix) : 0
	let n = 0
	for (const p of promptsOf(body.prompt)) n += (typeof p === 'string' ? count(p) : p.length) + suffix
	return n
}

/** A generous bound without the tokenizer (the reservation's). */
export const boundPromptTokens = (body: Pick<CompletionRequest, 'prompt' | 'suffix'>): number => promptTokens(body, boundText)

/** Counted with the tokenizer (usage the upstream did not report). */
export const countPromptTokens = (body: Pick<CompletionRequest, 'prompt' | 'suffix'>): number => promptTokens(body, countText)

/**
 * The `choices[].text` of a whole answer or of one chunk, joined: what an upstream that reports no usage is billed on.
 * @example choiceText([{ text: 'hello' }, { text: ' world' }]) === 'hello world'
 */
export function choiceText(choices: unknown): string {
	if (!Array.isArray(choices)) return ''
	let text = ''
	for (const c of choices) {
		const t = (c as { text?: unknown } | null)?.text
		if (typeof t === 'string') text += t
	}
	return text
}
