/**
 * Schemas of POST /v1/completions, OpenAI's legacy text completions
 * (platform.openai.com/docs/api-reference/completions/create). Open objects: the body goes upstream as the client
 * wrote it (vendors add their own fields: vLLM's `guided_json`, Ollama's `options`…), so only what the gateway reads
 * is checked here.
 */
import { t } from 'elysia'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

export const CompletionRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		prompt: t.Union([t.String(), t.Array(t.String()), t.Array(t.Integer()), t.Array(t.Array(t.Integer())), t.Null()], {
			description: 'A string, strings, a token array or token arrays (a batch: each prompt gets `n` choices)',
		}),
		suffix: t.Optional(Nullable(t.String({ description: 'Text after the insertion point (fill-in-the-middle)' }))),
		max_tokens: t.Optional(Nullable(t.Integer({ minimum: 0, description: "OpenAI's default is 16; left to the upstream when unset" }))),
		n: t.Optional(Nullable(t.Integer({ minimum: 1 }))),
		best_of: t.Optional(Nullable(t.Integer({ minimum: 1, description: 'Candidates generated (and billed) per prompt; not streamable' }))),
		echo: t.Optional(Nullable(t.Boolean())),
		// The vendor's own limits (OpenAI: at most 5; vLLM: its max_logprobs) are left to it.
		logprobs: t.Optional(Nullable(t.Integer({ minimum: 0 }))),
		stop: t.Optional(Nullable(t.Union([t.String(), t.Array(t.String())]))),
		stream: t.Optional(Nullable(t.Boolean())),
		stream_options: t.Optional(Nullable(t.Object({ include_usage: t.Optional(t.Boolean()) }, { additionalProperties: true }))),
	},
	{ additionalProperties: true },
)
export type CompletionRequest = typeof CompletionRequest.static

export const TextCompletion = t.Object(
	{
		id: t.String(),
		object: t.Literal('text_completion'),
		created: t.Integer(),
		model: t.String(),
		choices: t.Array(t.Object({ text: t.String(), index: t.Integer(), logprobs: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]), finish_reason: t.Union([t.String(), t.Null()]) }, { additionalProperties: true })),
		usage: t.Optional(t.Object({ prompt_tokens: t.Integer(), completion_tokens: t.Integer(), total_tokens: t.Integer() }, { additionalProperties: true })),
	},
	{ additionalProperties: true, description: 'With `stream: true`: `text/event-stream` of objects of this shape (text in pieces) ending in `data: [DONE]`' },
)
