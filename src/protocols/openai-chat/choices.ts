/**
 * Several choices (`n` > 1) of answers the gateway got one by one or from another vendor's several candidates: each
 * answer is encoded as usual with its `index`, the usage is the whole request's (OpenAI's `usage` counts every
 * choice's completion tokens: https://platform.openai.com/docs/api-reference/chat/create#chat-create-n).
 * @module
 */
import type { ChatResponse, Usage } from '../../core/ir'
import { emptyUsage } from '../../core/ir'
import type { ChoicesEncoder, EncodeContext } from '../codec'
import { choicesOf } from '../choices'
import type { OpenAIChatCompletion } from './model'
import { completionId, encodeResponse } from './response'
import { streamEncoder } from './stream-encode'
import { encodeUsage } from './usage'

/** Whole answers → one `chat.completion` with `choices[i]` the answer `answers[i]`; the first answer's id. */
export function encodeChoices(answers: ChatResponse[], usage: Usage, ctx: EncodeContext): OpenAIChatCompletion {
	const body = encodeResponse({ ...answers[0]!, usage }, ctx)
	body.choices = answers.map((a, i) => encodeResponse(a, { ...ctx, choice: i }).choices[0]!)
	return body
}

/**
 * Several answers' events → one chunk stream: each chunk names its choice by `index`, as OpenAI streams `n` > 1;
 * then one usage chunk (when asked for) and one `[DONE]`.
 */
export function choicesEncoder(ctx: EncodeContext, n: number): ChoicesEncoder {
	return choicesOf(n, {
		encoderOf: (choice) => streamEncoder({ ...ctx, choice }),
		idOf: completionId,
		close(out, usage, start) {
			if (ctx.includeUsage)
				out.push({ data: JSON.stringify({ id: start.id, object: 'chat.completion.chunk', created: start.created, model: ctx.model, choices: [], usage: encodeUsage({ ...emptyUsage(), ...usage }) }) })
			out.push({ data: '[DONE]' })
		},
	})
}
