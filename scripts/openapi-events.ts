/**
 * The events of the streamed answers, as the vendors document them, for the OpenAPI document only (openapi-streams.ts
 * puts them under components/schemas). The request path never sees these: a route's answer is a `Response` Elysia
 * neither validates nor reshapes. Objects are open, as the gateway relays fields it does not know.
 *
 * OpenAI chat `chat.completion.chunk` and Anthropic's events reuse the protocol schemas the codecs are written
 * against; Responses (platform.openai.com/docs/api-reference/responses-streaming), images
 * (…/images-streaming), transcriptions (…/audio/transcript-text-delta-event) and speech (…/audio/speech-audio-delta-event)
 * are spelled out here.
 * @module
 */
import { t, type TSchema } from 'elysia'
import { TextCompletion } from '../src/modules/completions/model'
import { AnthropicStreamEvent } from '../src/protocols/anthropic-messages/model'
import { GeminiResponse } from '../src/protocols/gemini/model'
import { Integer } from '../src/protocols/json-types'
import { OpenAIChatCompletionChunk } from '../src/protocols/openai-chat/model'
import { ResponsesOutputItem, ResponsesOutputText, ResponsesResponse } from '../src/protocols/openai-responses/model'

const open = { additionalProperties: true } as const

/** One Responses event (or several of one shape): its `type`, also the SSE `event:` name, and `sequence_number`, then its own fields. */
const rsEvent = (type: string | string[], fields: Record<string, TSchema>) =>
	t.Object({ type: typeof type === 'string' ? t.Literal(type) : t.Union(type.map((x) => t.Literal(x))), sequence_number: Integer(), ...fields }, open)
const lifecycle = ['response.created', 'response.queued', 'response.in_progress', 'response.completed', 'response.failed', 'response.incomplete']
const at = { item_id: t.String(), output_index: Integer(), content_index: Integer() }
const summaryAt = { item_id: t.String(), output_index: Integer(), summary_index: Integer() }
const ContentPart = t.Union([ResponsesOutputText, t.Object({ type: t.Literal('refusal'), refusal: t.String() }, open), t.Object({ type: t.Literal('reasoning_text'), text: t.String() }, open)])
const SummaryPart = t.Object({ type: t.Literal('summary_text'), text: t.String() }, open)
const Logprobs = t.Optional(t.Array(t.Object({ token: t.String(), logprob: t.Number() }, open)))
// Progress of OpenAI's hosted tools (relayed from OpenAI channels): the item they concern, nothing else.
const HOSTED: Record<string, string[]> = {
	web_search_call: ['in_progress', 'searching', 'completed'],
	file_search_call: ['in_progress', 'searching', 'completed'],
	code_interpreter_call: ['in_progress', 'interpreting', 'completed'],
	image_generation_call: ['in_progress', 'generating', 'completed'],
	mcp_call: ['in_progress', 'completed', 'failed'],
	mcp_list_tools: ['in_progress', 'completed', 'failed'],
}
const hostedProgress = Object.entries(HOSTED).flatMap(([item, steps]) => steps.map((s) => `response.${item}.${s}`))

export const ResponseStreamEvent = t.Union(
	[
		rsEvent(lifecycle, { response: ResponsesResponse }),
		rsEvent(['response.output_item.added', 'response.output_item.done'], { output_index: Integer(), item: ResponsesOutputItem }),
		rsEvent(['response.content_part.added', 'response.content_part.done'], { ...at, part: ContentPart }),
		rsEvent('response.output_text.delta', { ...at, delta: t.String(), logprobs: Logprobs }),
		rsEvent('response.output_text.done', { ...at, text: t.String(), logprobs: Logprobs }),
		rsEvent('response.output_text.annotation.added', { ...at, annotation_index: Integer(), annotation: t.Object({ type: t.String() }, open) }),
		rsEvent('response.refusal.delta', { ...at, delta: t.String() }),
		rsEvent('response.refusal.done', { ...at, refusal: t.String() }),
		rsEvent('response.function_call_arguments.delta', { item_id: t.String(), output_index: Integer(), delta: t.String() }),
		rsEvent('response.function_call_arguments.done', { item_id: t.String(), output_index: Integer(), arguments: t.String(), name: t.Optional(t.String()) }),
		rsEvent(['response.reasoning_summary_part.added', 'response.reasoning_summary_part.done'], { ...summaryAt, part: SummaryPart }),
		rsEvent('response.reasoning_summary_text.delta', { ...summaryAt, delta: t.String() }),
		rsEvent('response.reasoning_summary_text.done', { ...summaryAt, text: t.String() }),
		rsEvent('response.reasoning_text.delta', { ...at, delta: t.String() }),
		rsEvent('response.reasoning_text.done', { ...at, text: t.String() }),
		rsEvent(hostedProgress, { item_id: t.String(), output_index: Integer() }),
		rsEvent('error', { code: t.Nullable(t.String()), message: t.String(), param: t.Nullable(t.String()) }),
	],
	{ description: 'One event of a streamed response: the SSE `event:` name equals `type`; `sequence_number` counts from 0. No `[DONE]`.' },
)

const ImageUsage = t.Object(
	{ total_tokens: Integer(), input_tokens: Integer(), output_tokens: Integer(), input_tokens_details: t.Object({ text_tokens: Integer(), image_tokens: Integer() }, open) },
	open,
)
const imageSettings = { created_at: Integer(), size: t.String(), quality: t.String(), background: t.String(), output_format: t.String() }
const imageEvents = (prefix: string) => [
	t.Object({ type: t.Literal(`${prefix}.partial_image`), b64_json: t.String(), partial_image_index: Integer(), ...imageSettings }, open),
	t.Object({ type: t.Literal(`${prefix}.completed`), b64_json: t.String(), ...imageSettings, usage: t.Optional(ImageUsage) }, open),
]
export const ImageGenStreamEvent = t.Union(imageEvents('image_generation'), { description: 'With `stream: true`: `partial_image` previews (`partial_images`), then one `completed` per image' })
export const ImageEditStreamEvent = t.Union(imageEvents('image_edit'), { description: 'With `stream: true`: `partial_image` previews (`partial_images`), then one `completed` per image' })

const TranscriptUsage = t.Object({ type: t.Literal('tokens'), input_tokens: Integer(), output_tokens: Integer(), total_tokens: Integer() }, open)
const TranscriptLogprobs = t.Optional(t.Array(t.Object({ token: t.String(), logprob: t.Number(), bytes: t.Optional(t.Array(Integer())) }, open)))
export const TranscriptionStreamEvent = t.Union(
	[
		t.Object({ type: t.Literal('transcript.text.delta'), delta: t.String(), logprobs: TranscriptLogprobs }, open),
		t.Object({ type: t.Literal('transcript.text.segment'), id: t.String(), start: t.Number(), end: t.Number(), text: t.String(), speaker: t.String() }, open),
		t.Object({ type: t.Literal('transcript.text.done'), text: t.String(), logprobs: TranscriptLogprobs, usage: t.Optional(TranscriptUsage) }, open),
	],
	{ description: 'With `stream=true` (gpt-4o transcription models): text deltas, then `transcript.text.done` with the usage' },
)

export const SpeechStreamEvent = t.Union(
	[
		t.Object({ type: t.Literal('speech.audio.delta'), audio: t.String({ description: 'Base64 audio bytes' }) }, open),
		t.Object({ type: t.Literal('speech.audio.done'), usage: t.Object({ input_tokens: Integer(), output_tokens: Integer(), total_tokens: Integer() }, open) }, open),
	],
	{ description: 'With `stream_format: "sse"`: audio chunks, then `speech.audio.done` with the usage' },
)

/** Each event schema under its components/schemas name, with the description the document gives it. */
export const EVENTS = {
	ChatCompletionChunk: t.Composite([OpenAIChatCompletionChunk], { ...open, description: 'One `data:` payload of a streamed chat completion; the stream ends with `data: [DONE]`' }),
	TextCompletionChunk: t.Composite([TextCompletion], { ...open, description: 'One `data:` payload of a streamed completion (text in pieces); the stream ends with `data: [DONE]`' }),
	MessageStreamEvent: t.Union(AnthropicStreamEvent.anyOf, {
		description:
			'One event of a streamed message: the SSE `event:` name equals `type` (`message_start`, `content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`, `ping`, `error`)',
	}),
	ResponseStreamEvent,
	GenerateContentResponse: t.Composite([GeminiResponse], {
		...open,
		description: 'A whole `generateContent` answer, and each chunk of `streamGenerateContent` (one per `data:` with `alt=sse`, else the elements of a JSON array)',
	}),
	ImageGenStreamEvent,
	ImageEditStreamEvent,
	TranscriptionStreamEvent,
	SpeechStreamEvent,
}

/** The same as JSON, for the document (no TypeBox symbols). */
export const EVENT_SCHEMAS = JSON.parse(JSON.stringify(EVENTS)) as Record<keyof typeof EVENTS, Record<string, unknown>>
