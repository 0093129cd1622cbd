/**
 * What a chat request with `store: true` keeps, for every model and either way it is answered: the answer the caller
 * receives is read on its way out, unchanged. A whole answer (200 `chat.completion`) is kept as it is; a stream is
 * assembled from its chunks (assemble.ts) and kept once its `data: [DONE]` arrives, neither before (a cut stream has
 * none) nor after an error chunk. Read your writes: the copy is written before the bytes that end the answer (the body,
 * the stream's `[DONE]`) go out, so the caller may retrieve it at once from any instance. A failed write is logged and
 * the answer still completes (a retrieve of it is then the 404 of an unknown id). A request without `store: true`
 * never gets here: the relay's answer goes out untouched (the OpenAI fast path keeps its speed).
 * A stream whose caller did not ask for `stream_options.include_usage` carries no usage, yet OpenAI's stored copy always
 * has it: the copy gets the usage as billed, which the relay's settlement tells (relay/budget.ts `settle`, through the
 * request's `billed` hook) in the turn the stream's last chunk goes out, and the caller's bytes stay as they were.
 * @module
 */
import { createSseParser } from '../../core/sse'
import { jsonObjectOrUndefined } from '../../core/json'
import { type Usage, sumUsage } from '../../core/ir'
import { encodeUsage } from '../../protocols/openai-chat/usage'
import { includeUsageOf } from '../../protocols/openai-chat'
import type { Logger } from '../../lib/log'
import { CompletionAssembler } from './assemble'
import { checkMetadata, type CompletionStore, type KeepTerms } from './store'

type Obj = Record<string, unknown>

/**
 * What a `store: true` request keeps besides its answer: whose it is, the model it asked for (what the list's `model`
 * filter matches: an answer may name a snapshot, OpenAI's `gpt-4o-mini-2024-07-18` for `gpt-4o-mini`), its messages
 * and metadata, and for a stream that shows its caller no usage, the usage billed.
 */
export type StoreTerms = KeepTerms & { billed?: BilledUsage }

/** The longest a stored stream's `[DONE]` waits for its settlement (which comes in the same turn as its last chunk). */
const SETTLED_WAIT_MS = 5_000

/**
 * The usage billed for one request, as its settlements tell it (`take` is the relay's `billed` hook). Summed, since the
 * gateway's own MCP loop settles each round apart, every one before the stream's end; a relayed stream settles once,
 * in the turn its last chunk goes out, so the copy waits for the first.
 */
export class BilledUsage {
	private parts: Usage[] = []
	private told!: () => void
	private readonly settled = new Promise<void>((resolve) => (this.told = resolve))

	/** The relay's hook: a settlement's usage (none when it failed before it knew it). */
	readonly take = (usage?: Usage): void => {
		if (usage) this.parts.push(usage)
		this.told()
	}

	/**
	 * The usage billed in OpenAI's shape, once a settlement told it; null when none could, or none told it within
	 * SETTLED_WAIT_MS: the caller's `[DONE]` waits for this, and must never wait on a path that settles otherwise.
	 */
	async usage(): Promise<Obj | null> {
		let timer: Timer | undefined
		await Promise.race([this.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLED_WAIT_MS)))])
		clearTimeout(timer)
		return this.parts.length ? encodeUsage(sumUsage(this.parts)) : null
	}
}

/**
 * The terms of a request that asks to be stored, or undefined for any other (the SDK's `store` is `boolean | null`:
 * only `true` stores). Its `metadata` must be what OpenAI takes (400 otherwise, before anything is sent upstream).
 */
export function storeTermsOf(body: Obj, accountId: number): StoreTerms | undefined {
	if (body.store !== true) return undefined
	const terms: StoreTerms = { accountId, model: String(body.model), messages: Array.isArray(body.messages) ? body.messages : [], metadata: checkMetadata(body.metadata) }
	// A whole answer, and a stream with its usage chunk, carry their usage.
	if (body.stream === true && !includeUsageOf(body)) terms.billed = new BilledUsage()
	return terms
}

/** Whether a body is a whole, successful chat completion (not an error a compatible vendor answered 200 with). */
const isCompletion = (x: Obj | undefined): x is Obj =>
	!!x && (x.error === undefined || x.error === null) && typeof x.id === 'string' && x.id !== '' && Array.isArray(x.choices)

/** `res` (the chat route's answer) with its completion kept as `terms` say, once whole, before its end goes out. */
export async function keepingAnswer(store: CompletionStore, log: Logger, terms: StoreTerms, res: Response): Promise<Response> {
	if (res.status !== 200 || !res.body) return res
	const keep = (completion: Obj): Promise<void> =>
		store.keep(terms, completion).catch((e) => log.warn('chat completion not stored', { error: String(e), id: String(completion.id) }))
	if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
		const text = await res.text()
		const body = jsonObjectOrUndefined(text) as Obj | undefined
		if (isCompletion(body)) await keep(body)
		return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers })
	}
	const parser = createSseParser()
	const decoder = new TextDecoder()
	const assembler = new CompletionAssembler()
	let kept = false
	// A direct stream's chunks may be text (relay/sse-response.ts): read either way, passed on as they came.
	const watch = new TransformStream<Uint8Array | string, Uint8Array | string>({
		async transform(chunk, ctl) {
			for (const f of parser.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }))) assembler.push(f.data)
			// The chunk holding `[DONE]` waits for the write: the caller's next request finds the copy.
			if (assembler.done && !assembler.failed && !kept) {
				kept = true
				const completion = assembler.completion()
				if (completion.usage === null && terms.billed) completion.usage = await terms.billed.usage()
				if (isCompletion(completion)) await keep(completion)
			}
			ctl.enqueue(chunk)
		},
	})
	return new Response(res.body.pipeThrough(watch), { status: res.status, statusText: res.statusText, headers: res.headers })
}
