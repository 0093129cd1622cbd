/**
 * Claude's thinking kept for chat clients that drop it (src/modules/chat/kept-thinking.ts), on a real database: where
 * the blocks go back in a replayed turn (interleaved thinking before its own call), which turns get them (the current
 * tool loop only, with thinking on), what the client kept of the reasoning without a signature replaced, and the purge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { ChatRequest, Message } from '../../../src/core/ir'
import { silentLogger } from '../../../src/lib/log'
import { KEPT_THINKING_HOURS, purgeKeptThinking, thinkingStore } from '../../../src/modules/chat/kept-thinking'
import { createTestDb, type TestDb } from '../../helpers/db'

let t: TestDb
beforeAll(async () => {
	t = await createTestDb()
})
afterAll(() => t.drop())

const T1 = { type: 'thinking' as const, text: 'first I look', signature: 'sig_one' }
const T2 = { type: 'thinking' as const, text: 'then I check', signature: 'sig_two' }
const R = { type: 'redacted_thinking' as const, data: 'opaque' }
const call = (id: string) => ({ type: 'tool_call' as const, id, name: 'f', input: {} })
const result = (id: string) => ({ type: 'tool_result' as const, toolCallId: id, content: [{ type: 'text' as const, text: 'ok' }] })
const text = (s: string) => ({ type: 'text' as const, text: s })

const request = (messages: Message[], thinking = true): ChatRequest => ({
	model: 'claude-m',
	messages,
	stream: false,
	tools: [{ name: 'f', parameters: {} }],
	...(thinking && { reasoning: { enabled: true, effort: 'low' as const } }),
})

/** The answer's content, kept for `account` by one store, and a second store on the same database (another instance). */
async function keptBy(account: number, content: Parameters<NonNullable<ReturnType<ReturnType<typeof thinkingStore>['terms']>>['keep']>[0]) {
	const here = thinkingStore({ db: t.db, log: silentLogger })
	await here.terms(request([]), account)!.keep(content)
	return { here, elsewhere: thinkingStore({ db: t.db, log: silentLogger }) }
}

describe('kept thinking', () => {
	it('should put interleaved thinking back before the call it came before, the first leading the turn, on either instance', async () => {
		const { here, elsewhere } = await keptBy(1, [T1, text('Looking.'), call('toolu_a1'), T2, R, call('toolu_a2')])
		const replayed = request([
			{ role: 'user', content: [text('go')] },
			{ role: 'assistant', content: [text('Looking.'), call('toolu_a1'), call('toolu_a2')] },
			{ role: 'user', content: [result('toolu_a1'), result('toolu_a2')] },
		])
		for (const store of [here, elsewhere]) {
			const out = await store.restore(replayed, 1)
			expect(out!.messages[1]!.content).toEqual([T1, text('Looking.'), call('toolu_a1'), T2, R, call('toolu_a2')])
			expect(out!.messages[0]).toBe(replayed.messages[0]!)
		}
		expect(replayed.messages[1]!.content).toHaveLength(3) // the request itself untouched
	})

	it("should replace the client's unsigned reasoning text, and a fragment of the kept thinking under its signature, and leave other signed thinking as sent", async () => {
		const { elsewhere } = await keptBy(2, [T1, call('toolu_b1')])
		const unsigned = request([
			{ role: 'user', content: [text('go')] },
			{ role: 'assistant', content: [{ type: 'thinking', text: 'first I look' }, call('toolu_b1')] },
			{ role: 'user', content: [result('toolu_b1')] },
		])
		expect((await elsewhere.restore(unsigned, 2))!.messages[1]!.content).toEqual([T1, call('toolu_b1')])
		// The openai SDK's stream helper kept the last reasoning_content piece only, beside the whole block's signature.
		const fragment = request([
			{ role: 'user', content: [text('go')] },
			{ role: 'assistant', content: [{ ...T1, text: ' look' }, call('toolu_b1')] },
			{ role: 'user', content: [result('toolu_b1')] },
		])
		expect((await elsewhere.restore(fragment, 2))!.messages[1]!.content).toEqual([T1, call('toolu_b1')])
		// Read from the database once, then remembered: the loop's next request names the same turn again.
		const again = elsewhere.restore(fragment, 2)
		expect(again).not.toBeInstanceOf(Promise)
		expect((again as ChatRequest).messages[1]!.content).toEqual([T1, call('toolu_b1')])
		// As kept, or signed by another answer: as sent.
		for (const thinking of [T1, { ...T1, text: 'other thinking', signature: 'sig_other' }]) {
			const signed = request([
				{ role: 'user', content: [text('go')] },
				{ role: 'assistant', content: [thinking, call('toolu_b1')] },
				{ role: 'user', content: [result('toolu_b1')] },
			])
			expect(await elsewhere.restore(signed, 2)).toBeUndefined()
		}
	})

	it('should give back only the current tool loop, only with thinking on, only to the account, and nothing for ids not Claude’s', async () => {
		const { here } = await keptBy(3, [T1, call('toolu_c1')])
		await here.terms(request([]), 3)!.keep([T2, call('toolu_c2')])
		const history: Message[] = [
			{ role: 'user', content: [text('go')] },
			{ role: 'assistant', content: [call('toolu_c1')] },
			{ role: 'user', content: [result('toolu_c1'), text('now the next thing')] },
			{ role: 'assistant', content: [call('toolu_c2')] },
			{ role: 'user', content: [result('toolu_c2')] },
		]
		const out = await here.restore(request(history), 3)
		expect(out!.messages[1]!.content).toEqual([call('toolu_c1')])
		expect(out!.messages[3]!.content).toEqual([T2, call('toolu_c2')])
		expect(here.restore(request(history, false), 3)).toBeUndefined()
		expect(await here.restore(request(history), 4)).toBeUndefined()
		const openai: Message[] = [history[0]!, { role: 'assistant', content: [call('call_x')] }, { role: 'user', content: [result('call_x')] }]
		expect(here.restore(request(openai), 3)).toBeUndefined() // no lookup at all
	})

	it('should keep nothing for an answer without thinking, without calls or with ids not Claude’s, and offer no terms without tools or thinking', async () => {
		const store = thinkingStore({ db: t.db, log: silentLogger })
		await store.terms(request([]), 5)!.keep([text('hi'), call('toolu_e1')])
		await store.terms(request([]), 5)!.keep([T1, text('no call')])
		await store.terms(request([]), 5)!.keep([T1, call('call_other_vendor')]) // looked up only by Claude's ids: not written
		expect(await t.db.sql.query('SELECT call_id FROM kept_thinking WHERE account_id = 5')).toEqual([])
		expect(store.terms(request([], false), 5)).toBeUndefined()
		expect(store.terms({ ...request([]), tools: [] }, 5)).toBeUndefined()
	})

	it('should purge what was kept more than a day ago', async () => {
		await keptBy(6, [T1, call('toolu_f1')])
		expect(await purgeKeptThinking(t.db)).toBe(0)
		expect(await purgeKeptThinking(t.db, KEPT_THINKING_HOURS, Date.now() + (KEPT_THINKING_HOURS + 1) * 3_600_000)).toBeGreaterThan(0)
		const replay = request([{ role: 'user', content: [text('go')] }, { role: 'assistant', content: [call('toolu_f1')] }, { role: 'user', content: [result('toolu_f1')] }])
		expect(await thinkingStore({ db: t.db, log: silentLogger }).restore(replay, 6)).toBeUndefined()
	})
})
