/**
 * What a vendor handler returns, and how it becomes a `Response` (with chunk delays and body faults applied).
 * Handlers describe the body as data so that `cut` and `malformed` can be applied uniformly to every vendor.
 * @module
 */

import type { Fault } from './types'

type Headers = Record<string, string>
/** A body chunk: text or bytes backed by a plain ArrayBuffer (what `Response` accepts). */
export type Chunk = string | Uint8Array<ArrayBuffer>

/** A JSON body, serialised once. */
export type JsonReply = { type: 'json'; status: number; body: unknown; headers?: Headers }
/**
 * A streamed body: `chunks` are written in order; the last `tail` chunks are the terminator
 * (`data: [DONE]`, `message_stop`, the closing `]`…), which a `cut` never sends.
 */
export type StreamReply = { type: 'stream'; status: number; contentType: string; chunks: Chunk[]; tail: number; headers?: Headers }
/** A plain, non-JSON body (text, srt, vtt, binary). */
export type RawReply = { type: 'raw'; status: number; contentType: string; body: Chunk; headers?: Headers }
export type Reply = JsonReply | StreamReply | RawReply

/** @example json({ ok: true }) */
export const json = (body: unknown, status = 200, headers?: Headers): JsonReply => ({ type: 'json', status, body, headers })

/** @example sse([frame({ a: 1 }), 'data: [DONE]\n\n'], 1) */
export const sse = (chunks: string[], tail: number, headers?: Headers): StreamReply => ({
	type: 'stream',
	status: 200,
	contentType: 'text/event-stream; charset=utf-8',
	chunks,
	tail,
	headers,
})

/**
 * One SSE frame; `event` adds the `event:` line Anthropic and the Responses API use; `eol` lets Gemini use CRLF.
 * @example frame({ type: 'ping' }, 'ping') // 'event: ping\ndata: {"type":"ping"}\n\n'
 */
export function frame(data: unknown, event?: string, eol = '\n'): string {
	const body = `data: ${JSON.stringify(data)}${eol}${eol}`
	return event ? `event: ${event}${eol}${body}` : body
}

const encoder = new TextEncoder()
const toBytes = (c: Chunk): Uint8Array<ArrayBuffer> => (typeof c === 'string' ? encoder.encode(c) : c)

/** Hooks the server gives the body writer so it can tell a finished response from an abandoned one. */
export interface BodyHooks {
	chunkDelayMs: number
	signal: AbortSignal
	done(): void
	cancelled(): void
}

/** Breaks the JSON inside an SSE frame (or a JSON array element) while keeping the frame boundaries intact. */
function breakChunk(chunk: Chunk): string {
	const text = typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk)
	const start = text.indexOf('{')
	const end = text.lastIndexOf('}')
	if (start < 0 || end <= start) return '{"broken": '
	const cut = start + Math.max(1, Math.floor((end - start) / 2))
	return text.slice(0, cut) + text.slice(end + 1)
}

/** Applies the body-level faults (`cut`, `stall`, `malformed`, `empty`) to a reply, returning the chunks to write. */
function plan(reply: Reply, fault: Fault | undefined): { chunks: Chunk[]; abrupt: boolean; contentLength: boolean } {
	if (reply.type === 'stream') {
		const c = reply.chunks
		if (fault?.kind === 'cut' || fault?.kind === 'stall') return { chunks: c.slice(0, Math.min(fault.afterChunks, c.length - reply.tail)), abrupt: fault.kind === 'cut' && !!fault.abrupt, contentLength: false }
		if (fault?.kind === 'malformed') {
			const at = fault.atChunk === undefined ? (c.length > 1 ? 1 : 0) : Math.max(0, Math.min(fault.atChunk, c.length - 1 - reply.tail))
			return { chunks: [...c.slice(0, at), breakChunk(c[at]), ...c.slice(at + 1)], abrupt: false, contentLength: false }
		}
		if (fault?.kind === 'empty') return { chunks: [], abrupt: false, contentLength: true }
		return { chunks: c, abrupt: false, contentLength: false }
	}
	const body = reply.type === 'json' ? JSON.stringify(reply.body) : reply.body
	const half = (b: Chunk): Chunk => b.slice(0, Math.max(1, Math.floor(b.length / 2)))
	if (fault?.kind === 'cut' || fault?.kind === 'stall') return { chunks: [half(body)], abrupt: fault.kind === 'cut' && !!fault.abrupt, contentLength: false }
	if (fault?.kind === 'malformed') return { chunks: [half(body)], abrupt: false, contentLength: true }
	if (fault?.kind === 'empty') return { chunks: [], abrupt: false, contentLength: true }
	return { chunks: [body], abrupt: false, contentLength: true }
}

/**
 * Turns a reply into a `Response`. Without delays or faults the body is one precomputed string (fast path for
 * benchmarks); otherwise it is a pull stream that waits `chunkDelayMs` between chunks and reports cancellation.
 */
export function toResponse(reply: Reply, fault: Fault | undefined, hooks: BodyHooks): Response {
	const contentType = reply.type === 'json' ? 'application/json' : reply.contentType
	const headers: Headers = { 'content-type': contentType, ...reply.headers }
	const status = fault?.kind === 'empty' || fault?.kind === 'malformed' ? 200 : reply.status
	const { chunks, abrupt, contentLength } = plan(reply, fault)
	const streamed = reply.type === 'stream'
	const stall = fault?.kind === 'stall'
	if (!abrupt && !stall && (contentLength || (hooks.chunkDelayMs <= 0 && fault?.kind !== 'cut'))) {
		hooks.done()
		if (chunks.length === 1) return new Response(chunks[0], { status, headers })
		if (chunks.length === 0) return new Response(streamed ? '' : null, { status, headers })
		const allText = chunks.every((c) => typeof c === 'string')
		return new Response(allText ? chunks.join('') : new Blob(chunks.map(toBytes)), { status, headers })
	}
	let i = 0
	const body = new ReadableStream<Uint8Array>({
		async pull(controller) {
			if (i > 0 && hooks.chunkDelayMs > 0) await Bun.sleep(hooks.chunkDelayMs)
			if (hooks.signal.aborted) return
			if (i < chunks.length) {
				controller.enqueue(toBytes(chunks[i++]))
				return
			}
			// Silent from here on, the body still open, until the client gives up (then `cancel` reports it).
			if (stall) {
				await new Promise<void>((resolve) => (hooks.signal.aborted ? resolve() : hooks.signal.addEventListener('abort', () => resolve(), { once: true })))
				return
			}
			// A cut with `abrupt` resets the connection mid-body; otherwise the body ends without its terminator.
			if (abrupt) {
				// Long enough for the chunks already written to reach the reader first: a reset that overtakes them
				// (seen at 1 ms, and once at 25 ms under CI's load) makes "cut after content" a cut before any.
				await Bun.sleep(100)
				hooks.done()
				controller.error(new Error('mock: connection cut'))
				return
			}
			hooks.done()
			controller.close()
		},
		cancel: () => hooks.cancelled(),
	})
	return new Response(body, { status, headers })
}
