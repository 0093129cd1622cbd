/**
 * The agent loop for channels that cannot run MCP themselves: call the model, run the MCP tools it called, feed the
 * results back, call it again, until it answers, calls one of the caller's own tools (the answer then goes back to
 * the caller with `tool_use`, after running the MCP calls of the same turn), or reaches the round limit (the MCP
 * calls of the last round still run, so every `mcp_tool_use` has its result, and the answer stops with `pause_turn`:
 * Anthropic's stop for a server-side tool loop cut short, which a client resumes by sending the answer back).
 *
 * The answer is one event stream: one `start`, the blocks of every round with continuous indexes and the
 * `mcp_tool_result` blocks as the tools return, usage summed over rounds, one `finish`.
 *
 * Billing: every round is an upstream call billed through the ledger like any request, with its own reservation
 * (round 1 uses the request's; round n reserves just before it starts, sized to that round's prompt, its cap chosen
 * as round 1's was and fitted to the context window that prompt leaves), so each hold
 * covers exactly one call and nothing is spent that was not reserved first. Each round writes one usage row: round 1
 * under the request id, round n under `<request id>:r<n>`, so the rows of one request share its id as a prefix and
 * say their round, while `end_reason` keeps its usual meaning (ok, client_abort, upstream_cut, error) and with it the
 * settle rules that depend on it. A refused reservation ends the answer with the 402 as an error.
 * @module
 */
import { failedRow } from '../billing/usage-record'
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import { type ChatRequest, emptyUsage, type Message, type StopReason, type ToolChoice } from '../core/ir'
import { type Budget, type CallInfo, countedUsage, release, reserveBudget, settle, withUpstreamCap } from '../relay/budget'
import { boundInputTokens, countText, estimateInputTokens } from '../relay/estimate'
import { mediaRuleFor } from '../relay/image-tokens'
import { fitCap } from '../relay/output-limit'
import { addUsage, type McpCall, newRoundOut, type RoundOut, spliceRound } from './splice'
import type { McpLimits } from './config'
import { openRound, type Round, type RoundTarget } from './round'
import type { McpSession, ToolOutcome } from './session'
import type { ToolNames } from './tools'

export type LoopInput = {
	target: RoundTarget
	info: CallInfo
	limits: McpLimits
	sessions: Map<string, McpSession>
	names: ToolNames
	/** The request of round 1 (history in the model's view, MCP tools offered); later rounds extend its messages. */
	first: ChatRequest
	/** Blocks that open the answer before round 1 (servers that could not be reached). */
	preamble: StreamEvent[]
	/** Round 1, already started (so that a channel failing at once could still fail over). */
	round: Round
	budget: Budget
}

/** `required` or a named tool would force another call every round; after round 1 the model chooses. */
const relax = (tc: ToolChoice | undefined): ToolChoice | undefined => (tc && (tc.type === 'required' || tc.type === 'tool') ? { type: 'auto' } : tc)

async function runTool(sessions: Map<string, McpSession>, c: McpCall, signal: AbortSignal): Promise<ToolOutcome> {
	const s = sessions.get(c.server)
	if (!s) return { isError: true, content: [{ type: 'text', text: `MCP server "${c.server}" is not available` }] }
	return s.call(c.tool, c.input, signal)
}

/** A round cut short: its usage completed with counts, as the bill takes it (budget.ts `countedUsage`). */
function completeCutUsage(out: RoundOut, budget: Budget) {
	const counted = countedUsage(out.usage, () => budget.countInput(), () => countText(out.text), true)
	if (!counted) return
	out.usage = { ...out.usage, ...counted }
	out.estimated = true
}

const stopReasonOf = (out: RoundOut, last: boolean): StopReason => (out.ownCalls ? 'tool_use' : last ? 'pause_turn' : (out.reason ?? 'end_turn'))

/**
 * The answer's events, and `abandon` for a client that left before they were ever read (the events' own cleanup
 * never runs then). Either way every round is billed once and the sessions are closed once.
 */
export function mcpLoop(l: LoopInput): { events: AsyncGenerator<StreamEvent>; abandon(): Promise<void> } {
	const { target, info } = l
	const { svc, token, requestId } = target.call
	const state = { next: 0 }
	let total = emptyUsage()
	const messages: Message[] = l.first.messages.slice()
	let round = l.round
	let budget = l.budget
	let out = newRoundOut()
	let roundInfo = info
	let billed = false
	const bill = async (endReason: string) => {
		if (billed) return
		billed = true
		const o = out
		await settle(roundInfo, budget, { usage: o.usage, estimateOutput: () => countText(o.text), status: 200, endReason, estimated: o.estimated, channel: target.ch, upstreamModel: target.upstreamModel })
	}
	const onAbort = () => round.abort()
	target.signal.addEventListener('abort', onAbort, { once: true })
	let started = false
	let cleaned: Promise<void> | undefined
	const cleanup = () =>
		(cleaned ??= (async () => {
			target.signal.removeEventListener('abort', onAbort)
			round.abort()
			await bill(target.signal.aborted ? 'client_abort' : 'error').catch((e) => svc.log.error('settle failed', { request_id: requestId, error: String(e) }))
			// In the background: the answer is complete, and ending a session must not hold the client's response up.
			for (const s of l.sessions.values()) void s.close()
		})())

	async function* events(): AsyncGenerator<StreamEvent> {
		if (cleaned) return
		started = true
		try {
			yield* run()
		} finally {
			await cleanup()
		}
	}

	async function* run(): AsyncGenerator<StreamEvent> {
		yield { type: 'start', id: '', model: target.call.ir.model, created: Math.floor(Date.now() / 1000) }
		// The preamble's blocks are numbered from 0: they open the answer.
		yield* l.preamble
		state.next = l.preamble.filter((e) => e.type === 'block_start').length
		for (let n = 1; ; n++) {
			try {
				yield* spliceRound(round.events, state, l.names, out, total)
			} catch {
				out.error ??= new GatewayError('upstream', 'the upstream stream failed', { code: 'upstream_stream_error' })
			}
			// Cut at a stop sequence the gateway enforces: the vendor stops generating, and the round is billed and shown as
			// a stream cut short is (relay/stream.ts): the output the larger of the reported and the counted.
			if (round.cutShort()) {
				round.abort()
				completeCutUsage(out, budget)
			}
			if (target.signal.aborted) return
			if (out.error || !out.reason) {
				const error = out.error ?? new GatewayError('upstream', 'the upstream stream ended unexpectedly', { code: 'upstream_cut' })
				await bill(error.code === 'upstream_cut' ? 'upstream_cut' : 'error')
				yield { type: 'error', error }
				return
			}
			const last = n >= l.limits.maxRounds
			const calls = out.mcpCalls
			await bill('ok')
			total = addUsage(total, out.usage)
			const outcomes = await Promise.all(calls.map((c) => runTool(l.sessions, c, target.signal)))
			for (const [k, c] of calls.entries()) {
				const i = state.next++
				yield { type: 'block_start', index: i, block: { kind: 'mcp_tool_result', toolUseId: c.wireId, isError: outcomes[k]!.isError, content: outcomes[k]!.content } }
				yield { type: 'block_stop', index: i }
			}
			if (target.signal.aborted) return
			if (!calls.length || out.ownCalls || last) {
				yield { type: 'usage', usage: total }
				const reason = calls.length ? stopReasonOf(out, last) : (out.reason ?? 'end_turn')
				yield reason === 'stop_sequence' && out.stopSequence !== undefined ? { type: 'finish', reason, stopSequence: out.stopSequence } : { type: 'finish', reason }
				return
			}
			messages.push(
				{ role: 'assistant', content: out.parts },
				{ role: 'user', content: calls.map((c, k) => ({ type: 'tool_result' as const, toolCallId: c.id, name: c.modelName, content: outcomes[k]!.content, ...(outcomes[k]!.isError && { isError: true }) })) },
			)
			const ir: ChatRequest = { ...l.first, messages: messages.slice(), toolChoice: relax(l.first.toolChoice) }
			if (!ir.toolChoice) delete ir.toolChoice
			out = newRoundOut()
			roundInfo = { ...info, requestId: `${requestId}:r${n + 1}` }
			try {
				// The cap is chosen as round 1's was, on this round's longer prompt (relay/output-limit.ts); the round runs on this
				// attempt's channel, so its images count as that model counts them (relay/image-tokens.ts).
				const media = mediaRuleFor([{ type: target.ch.type, model: target.upstreamModel }], ir)
				const bound = boundInputTokens(ir, undefined, media)
				let counted: number | undefined
				const count = () => (counted ??= estimateInputTokens(ir, media))
				const fit = fitCap(target.call.client.name, ir, [target.ch], budget.price, svc.catalog.limits(target.call.ir.model), bound, count)
				budget = await reserveBudget(svc, token, roundInfo.requestId, fit.price, bound, target.call.ir.maxTokens, count, 1, fit.uncapped, budget.reach)
			} catch (e) {
				yield { type: 'error', error: e instanceof GatewayError ? e : new GatewayError('api_error', 'cannot reserve the next round') }
				return
			}
			billed = false
			const next = await openRound(target, withUpstreamCap(ir, budget, target.adapter.protocol.requiresMaxTokens === true))
			if ('error' in next) {
				billed = true
				const failed = failedRow(next.error.status, target.signal.aborted)
				await release(roundInfo, budget, failed.status, failed.endReason, target.ch)
				yield { type: 'error', error: next.error }
				return
			}
			round = next
		}
	}

	return { events: events(), abandon: async () => (started ? undefined : cleanup()) }
}
