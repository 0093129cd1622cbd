/**
 * Claude's thinking kept for chat clients that drop it. A converted chat answer from Claude carries its thinking (text
 * and signature, or redacted data) in `reasoning_content` / `reasoning_details`, but many OpenAI-compatible clients
 * (`@ai-sdk/openai-compatible` as opencode uses it, Qwen Code, Cline) send the assistant message back with its
 * `tool_calls` and without those fields. With thinking on, Anthropic refuses a tool-use turn not led by its thinking
 * block ("a final `assistant` message must start with a thinking block",
 * https://docs.claude.com/en/docs/build-with-claude/extended-thinking), so such a turn went
 * with thinking off, and an agent loop stopped thinking after its first tool call.
 *
 * So the thinking blocks of a converted Claude answer that calls tools are kept, by the account and the answer's first
 * call id, and put back on a later request's assistant turn that replays those calls without them, or with their
 * signature on other text (`altered`), in the current tool loop, the turns Anthropic needs them on. Thinking may be many KB, too much for the call id (as Gemini's signature
 * rides there, core/tool-ids.ts): it is kept in the database (`kept_thinking`, a day), so any instance finds it, and
 * the recent ones in this instance's memory. Written before the end of the answer reaches the client (the JSON body,
 * the stream's last chunks), so a next turn sent at once to any instance finds it; a failed write is logged and the
 * next turn goes as before, thinking off. Only an account's own answers are given back to it. Never on the fast path
 * (a chat answer from Claude is always converted), and only for requests with tools and thinking on.
 * @module
 */
import { and, eq, inArray, lt, sql } from 'drizzle-orm'
import type { ChatRequest, Message, Part, RedactedThinkingPart, ThinkingPart } from '../../core/ir'
import type { StreamEvent } from '../../core/events'
import { isForeignSignature } from '../../core/signatures'
import type { Db } from '../../db/client'
import { keptThinking as table } from '../../db/schema'
import type { Logger } from '../../lib/log'
import type { EncodeContext, ProtocolCodec } from '../../protocols/codec'
import type { EventEncoder } from '../../protocols/stream-machine'
import type { KeptThinking } from '../../relay/chat'
import { recent } from '../responses/recent'
import { keptFirst } from '../responses/kept-first'

/** How long kept thinking is given back: a day, as long as an agent session is usually resumed within. */
export const KEPT_THINKING_HOURS = 24

/** Anthropic's tool_use ids (https://docs.anthropic.com/en/api/messages): only turns calling with them are looked up. */
const CLAUDE_CALL = 'toolu_'

type Block = ThinkingPart | RedactedThinkingPart
/** The thinking blocks of an answer, each with the call it came before (thinking after the last call leads no call: not kept). */
type Kept = Array<{ block: Block; before: string }>

/** What an answer's content keeps: its thinking blocks and the call each preceded, under its first call's id. */
function keptOf(content: ReadonlyArray<{ type: string; id?: string }>): { callId: string; kept: Kept } | undefined {
	const kept: Kept = []
	let callId: string | undefined
	let pending: Block[] = []
	for (const p of content) {
		if (p.type === 'thinking' || p.type === 'redacted_thinking') pending.push(p as Block)
		else if (p.type === 'tool_call' && p.id !== undefined) {
			callId ??= p.id
			for (const block of pending) kept.push({ block, before: p.id })
			pending = []
		}
	}
	// Only what a later request can be looked up by (another Anthropic-protocol vendor's ids would be written for nothing).
	return callId?.startsWith(CLAUDE_CALL) && kept.length ? { callId, kept } : undefined
}

/** Whether a turn carries thinking Anthropic takes back (its own signed thinking, or redacted data). */
const hasClaudeThinking = (m: Message) =>
	m.content.some((p) => p.type === 'redacted_thinking' || (p.type === 'thinking' && p.signature !== undefined && p.signature !== '' && !isForeignSignature(p.signature)))

const firstCall = (m: Message) => m.content.find((p) => p.type === 'tool_call')?.id

/**
 * What a tool returned that an OpenAI chat tool message (text only) cannot hold: images, files and audio, which clients
 * send in a user message right after the results (Cline's read_files of an image: "see following user message for
 * image"). Claude gets them in the results' turn (consecutive user messages merged), so they do not end the tool loop.
 */
const TOOL_OUTPUT = new Set<Part['type']>(['tool_result', 'image', 'file', 'audio'])

/**
 * The assistant turns of the current tool loop (after the last user message with more than tool results and their
 * media) that call Claude's tools: their indexes, first call ids, and whether they carry Claude's thinking already.
 */
function loopTurns(messages: Message[]): Array<{ at: number; callId: string; signed: boolean }> {
	const out: Array<{ at: number; callId: string; signed: boolean }> = []
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i]!
		if (m.role === 'user') {
			if (m.content.some((p) => !TOOL_OUTPUT.has(p.type))) break
			continue
		}
		const callId = firstCall(m)
		if (callId?.startsWith(CLAUDE_CALL)) out.push({ at: i, callId, signed: hasClaudeThinking(m) })
	}
	return out
}

/**
 * Whether a turn's signed thinking is the kept answer's with its text changed. The openai SDK's stream helper
 * (`chat.completions.stream(…).finalChatCompletion()`) assigns the delta fields it does not know rather than append
 * them, so a streamed answer's message keeps only the last `reasoning_content` piece: sent back, Claude's signature
 * came with a fragment of its thinking, which Anthropic refuses ("Invalid `signature` in `thinking` block"). Thinking
 * the kept answer does not vouch for (another signature) goes as sent.
 */
function altered(m: Message, kept: Kept): boolean {
	const texts = new Map<string, string>()
	for (const { block } of kept) if (block.type === 'thinking' && block.signature) texts.set(block.signature, block.text)
	let changed = false
	for (const p of m.content) {
		if (p.type !== 'thinking' || !p.signature || isForeignSignature(p.signature)) continue
		const text = texts.get(p.signature)
		if (text === undefined) return false
		if (text !== p.text) changed = true
	}
	return changed
}

/** The turn with its kept thinking back: the blocks before its first call lead it, the others go before their call. */
function withThinking(m: Message, kept: Kept): Message {
	const first = firstCall(m)
	const lead = kept.filter((k) => k.before === first).map((k) => k.block)
	const content: Part[] = [...lead]
	for (const p of m.content) {
		// What the client kept of the reasoning (unsigned text) is replaced by the blocks themselves.
		if (p.type === 'thinking' || p.type === 'redacted_thinking') continue
		if (p.type === 'tool_call' && p.id !== first) for (const k of kept) if (k.before === p.id) content.push(k.block)
		content.push(p)
	}
	return { ...m, content }
}

/** Collects an answer's content from its stream events: thinking blocks (text, signature, redacted data) and calls. */
function streamedContent() {
	const content: Array<Block | { type: 'tool_call'; id: string }> = []
	const open = new Map<number, ThinkingPart>()
	return {
		content,
		push(e: StreamEvent) {
			if (e.type === 'block_start') {
				if (e.block.kind === 'thinking') {
					const part: ThinkingPart = { type: 'thinking', text: '' }
					open.set(e.index, part)
					content.push(part)
				} else if (e.block.kind === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: e.block.data })
				else if (e.block.kind === 'tool_call') content.push({ type: 'tool_call', id: e.block.id })
			} else if (e.type === 'thinking_delta') {
				const part = open.get(e.index)
				if (part) part.text += e.text
			} else if (e.type === 'signature_delta') {
				const part = open.get(e.index)
				if (part) part.signature = (part.signature ?? '') + e.signature
			}
		},
	}
}

/** `codec` whose stream encoder shows `see` each event before encoding it. */
function tappedStream<C extends ProtocolCodec>(codec: C, see: (e: StreamEvent) => void): C {
	return {
		...codec,
		streamEncoder(ctx: EncodeContext): EventEncoder {
			const inner = codec.streamEncoder(ctx)
			return {
				push(event, out) {
					see(event)
					inner.push(event, out)
				},
				end: (out) => inner.end(out),
				get done() {
					return inner.done
				},
			}
		},
	}
}

/** How many answers' thinking this instance holds in memory, their total size, and for how long. */
const MEMORY = { limit: 5_000, bytes: 32 * 1024 * 1024, ttlMs: 3_600_000 }

export function thinkingStore(opts: { db: Db; log: Logger; now?: () => number }): KeptThinking {
	const memory = recent<Kept>({ ...MEMORY, now: opts.now ?? Date.now })
	// One entry per account and call id: another account's answer with the same id never replaces it.
	const key = (accountId: number, callId: string) => `${accountId}:${callId}`
	const keep = async (accountId: number, content: ReadonlyArray<{ type: string; id?: string }>): Promise<void> => {
		const found = keptOf(content)
		if (!found) return
		memory.set(accountId, key(accountId, found.callId), found.kept, JSON.stringify(found.kept).length)
		try {
			await opts.db.orm
				.insert(table)
				.values({ accountId, callId: found.callId, blocks: found.kept })
				.onConflictDoUpdate({ target: [table.accountId, table.callId], set: { blocks: found.kept, createdAt: sql`now()` } })
		} catch (e) {
			opts.log.warn('kept thinking not stored', { error: String(e) })
		}
	}
	const load = async (accountId: number, callIds: string[]): Promise<Map<string, Kept>> => {
		try {
			const rows = await opts.db.orm
				.select({ callId: table.callId, blocks: table.blocks })
				.from(table)
				.where(and(eq(table.accountId, accountId), inArray(table.callId, callIds)))
			// Remembered here too: a tool loop's later requests name the same turns again (signed ones included, to
			// check their text: `altered`), and another instance's answers would otherwise be read on every one of them.
			for (const r of rows) memory.set(accountId, key(accountId, r.callId), r.blocks as Kept, JSON.stringify(r.blocks).length)
			return new Map(rows.map((r) => [r.callId, r.blocks as Kept]))
		} catch (e) {
			opts.log.warn('kept thinking not read', { error: String(e) })
			return new Map()
		}
	}
	return {
		terms(ir, accountId) {
			if (!ir.tools?.length || !ir.reasoning?.enabled) return undefined
			return {
				keep: (content) => keep(accountId, content),
				streaming(client: ProtocolCodec) {
					const seen = streamedContent()
					let kept: Promise<void> | undefined
					return {
						client: tappedStream(client, (e) => {
							// At the answer's end, before its last chunks are encoded (they wait for the write below).
							if (e.type === 'finish') kept ??= keep(accountId, seen.content)
							else seen.push(e)
						}),
						hold: (res: Response) => keptFirst(res, () => kept),
					}
				},
			}
		},
		restore(ir, accountId) {
			if (!ir.reasoning?.enabled) return undefined
			const bare = loopTurns(ir.messages)
			if (!bare.length) return undefined
			const put = (found: Map<string, Kept>) => {
				let messages: Message[] | undefined
				for (const { at, callId, signed } of bare) {
					const kept = found.get(callId)
					if (!kept || (signed && !altered(ir.messages[at]!, kept))) continue
					messages ??= [...ir.messages]
					messages[at] = withThinking(ir.messages[at]!, kept)
				}
				return messages && { ...ir, messages }
			}
			const found = new Map<string, Kept>()
			for (const { callId } of bare) {
				const kept = memory.get(accountId, key(accountId, callId))
				if (kept) found.set(callId, kept)
			}
			const missing = bare.filter((t) => !found.has(t.callId)).map((t) => t.callId)
			if (!missing.length) return put(found)
			return load(accountId, missing).then((rows) => put(new Map([...found, ...rows])))
		},
	}
}

/** Forgets the thinking kept before `hours` ago; returns how many answers'. Any instance may run it. */
export async function purgeKeptThinking(db: Db, hours = KEPT_THINKING_HOURS, now = Date.now()): Promise<number> {
	const gone = await db.orm
		.delete(table)
		.where(lt(table.createdAt, new Date(now - hours * 3_600_000)))
		.returning({ id: table.callId })
	return gone.length
}
