/**
 * A streamed chat completion folded back into the `chat.completion` object a whole answer would have been, from the
 * `chat.completion.chunk` frames the caller received (https://platform.openai.com/docs/api-reference/chat-streaming):
 * what a stored streamed completion is kept as. Each choice's delta is merged by its `index`: text fields
 * (`content`, `refusal`, `reasoning_content`) are concatenated, tool calls (and the gateway's `mcp_calls`) by their own
 * `index` with their `arguments` concatenated, `annotations` appended; `logprobs` content appended; the last
 * `finish_reason`, `usage` and top-level fields win. Signature-only `reasoning_details` entries (how the stream
 * encoder sends a thinking block's signature, protocols/openai-chat/stream-encode.ts) get the reasoning text streamed
 * since the previous entry, as the whole answer's entry has it.
 * @module
 */
import { jsonObjectOrUndefined } from '../../core/json'

type Obj = Record<string, unknown>

const isObj = (x: unknown): x is Obj => !!x && typeof x === 'object' && !Array.isArray(x)

/** One choice being assembled. */
type Choice = {
	index: number
	message: Obj
	/** Tool calls and MCP calls by their delta `index`, in order of first appearance. */
	calls: Map<string, Map<number, Obj>>
	/** Reasoning text streamed since the last `reasoning_details` entry. */
	reasoning: string
	logprobs: Obj | null
	finish: unknown
}

/** Delta fields whose string pieces are concatenated; any other string is replaced by the later one. */
const TEXT_FIELDS = new Set(['content', 'refusal', 'reasoning_content', 'reasoning'])
/** Delta arrays whose items are merged by their `index` (each item's first piece carries the id). */
const INDEXED = new Set(['tool_calls', 'mcp_calls'])
/** Chunk fields that are not the completion's own: the stream's framing. */
const CHUNK_ONLY = new Set(['object', 'choices', 'usage', 'obfuscation'])

/** Merges a call's later piece into it: `arguments` (and a name split across pieces) concatenated, the rest set. */
function mergeCall(into: Obj, piece: Obj) {
	for (const [k, v] of Object.entries(piece)) {
		if (k === 'index' || v === undefined) continue
		if (k === 'function' && isObj(v)) {
			const fn = isObj(into.function) ? into.function : (into.function = {})
			for (const [fk, fv] of Object.entries(v))
				if (typeof fv === 'string' && typeof fn[fk] === 'string' && (fk === 'arguments' || fk === 'name')) fn[fk] = (fn[fk] as string) + fv
				else if (fv !== undefined) fn[fk] = fv
		} else if (k === 'arguments' && typeof v === 'string' && typeof into[k] === 'string') into[k] = (into[k] as string) + v
		else into[k] = v
	}
}

/** The assembler of one stream: `push` each frame's data, `failed` once an error frame came, `completion()` at the end. */
export class CompletionAssembler {
	private top: Obj = {}
	private choices = new Map<number, Choice>()
	private usage: unknown = undefined
	/** An error frame came (the gateway's or the upstream's): the answer failed. */
	failed = false
	/** The stream's `[DONE]` came. */
	done = false

	/** Takes one frame's `data`. */
	push(data: string) {
		if (data === '[DONE]') {
			this.done = true
			return
		}
		const chunk = jsonObjectOrUndefined(data)
		if (!isObj(chunk)) return
		if (chunk.error !== undefined && chunk.error !== null) {
			this.failed = true
			return
		}
		for (const [k, v] of Object.entries(chunk)) if (!CHUNK_ONLY.has(k) && v !== undefined && v !== null) this.top[k] = v
		if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage
		if (Array.isArray(chunk.choices)) for (const c of chunk.choices) if (isObj(c)) this.choice(c)
	}

	private choice(c: Obj) {
		const index = typeof c.index === 'number' ? c.index : 0
		let ch = this.choices.get(index)
		if (!ch) {
			ch = { index, message: { role: 'assistant', content: null, refusal: null }, calls: new Map(), reasoning: '', logprobs: null, finish: null }
			this.choices.set(index, ch)
		}
		if (c.finish_reason !== undefined && c.finish_reason !== null) ch.finish = c.finish_reason
		if (isObj(c.logprobs)) {
			const lp = (ch.logprobs ??= {})
			for (const [k, v] of Object.entries(c.logprobs))
				if (Array.isArray(v)) lp[k] = [...(Array.isArray(lp[k]) ? (lp[k] as unknown[]) : []), ...v]
				else if (!(k in lp)) lp[k] = v
		}
		if (isObj(c.delta)) this.delta(ch, c.delta)
	}

	private delta(ch: Choice, delta: Obj) {
		const m = ch.message
		for (const [k, v] of Object.entries(delta)) {
			if (v === undefined || k === 'obfuscation') continue
			if (TEXT_FIELDS.has(k)) {
				if (typeof v !== 'string') {
					if (!(k in m)) m[k] = v
					continue
				}
				m[k] = typeof m[k] === 'string' ? (m[k] as string) + v : v
				if (k === 'reasoning_content' || k === 'reasoning') ch.reasoning += v
			} else if (INDEXED.has(k) && Array.isArray(v)) {
				let calls = ch.calls.get(k)
				if (!calls) ch.calls.set(k, (calls = new Map()))
				for (const piece of v) {
					if (!isObj(piece)) continue
					const i = typeof piece.index === 'number' ? piece.index : calls.size
					const call = calls.get(i)
					if (call) mergeCall(call, piece)
					else {
						const fresh: Obj = {}
						mergeCall(fresh, piece)
						calls.set(i, fresh)
					}
				}
			} else if (k === 'reasoning_details' && Array.isArray(v)) {
				const list = (Array.isArray(m[k]) ? m[k] : (m[k] = [])) as unknown[]
				for (const d of v) {
					// A signature sent on its own closes the thinking block streamed as reasoning text before it.
					if (isObj(d) && d.type === 'reasoning.text' && d.text === '' && ch.reasoning) list.push({ ...d, text: ch.reasoning })
					else list.push(d)
					ch.reasoning = ''
				}
			} else if (Array.isArray(v)) m[k] = [...(Array.isArray(m[k]) ? (m[k] as unknown[]) : []), ...v]
			else if (isObj(v) && isObj(m[k])) {
				// audio: its data and transcript stream in pieces.
				const into = m[k] as Obj
				for (const [ak, av] of Object.entries(v)) into[ak] = typeof av === 'string' && typeof into[ak] === 'string' && (ak === 'data' || ak === 'transcript') ? into[ak] + av : av
			} else if (v !== null || !(k in m)) m[k] = v
		}
	}

	/** The whole `chat.completion`, its choices in index order. */
	completion(): Obj {
		const choices = [...this.choices.values()]
			.sort((a, b) => a.index - b.index)
			.map((ch) => {
				const message: Obj = { ...ch.message }
				for (const [k, calls] of ch.calls) message[k] = [...calls.values()]
				return { index: ch.index, message, logprobs: ch.logprobs, finish_reason: ch.finish }
			})
		const { id, created, model, ...rest } = this.top
		return { id, object: 'chat.completion', created, model, choices, ...(this.usage !== undefined ? { usage: this.usage } : { usage: null }), ...rest }
	}
}
