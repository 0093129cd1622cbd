/**
 * POST /v1/responses/compact (https://platform.openai.com/docs/api-reference/responses/compact): a conversation
 * (`input`, or the stored chain of `previous_response_id`, plus `instructions`) compacted into
 * `{id, object: 'response.compaction', created_at, output, usage}`, whose `output` is the input's user messages as sent
 * followed by one `compaction` item with an opaque `encrypted_content` standing for the rest.
 * Usage: every input text as input tokens (the chain's too), and the words the compaction item stands for as output.
 * @module
 */

import type { Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { inputTokens } from '../shared/scenario'
import { base64, countWords, stableId, unixNow } from '../shared/text'
import { checkModel, requireObject } from './errors'
import { inputItems, readResponses } from './responses-read'
import { priorContext, type ResponsesStore } from './responses-store'

export function compactResponse(body: unknown, jsonError: boolean, models: string[] | undefined, store: ResponsesStore): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const invalid = checkModel(b.model, models)
	if (invalid) return invalid
	const conv = readResponses(b)
	conv.inputTexts.unshift(...priorContext(store, b))
	const items = inputItems(b.input)
	const users = items.filter((i) => (i.type === undefined || i.type === 'message') && i.role === 'user')
	const rest = items.filter((i) => !users.includes(i))
	const seed = JSON.stringify(b.input ?? '') + String(b.previous_response_id ?? '')
	const input = inputTokens(conv)
	const output = Math.max(1, countWords(JSON.stringify(rest)))
	return json({
		id: stableId('resp_', `compact|${seed}`, 32),
		object: 'response.compaction',
		created_at: unixNow(),
		output: [
			...users.map((u, i) => ({ id: stableId('msg_', `compact|${seed}|${i}`, 32), type: 'message', status: 'completed', ...u })),
			{ id: stableId('cmp_', `compact|${seed}`, 32), type: 'compaction', encrypted_content: base64(JSON.stringify(rest)) },
		],
		usage: { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + output },
	})
}
