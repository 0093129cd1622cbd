/**
 * One turn at a time per conversation across instances: the lock is a lease on the conversation's row in the shared
 * database (modules/conversations/lock.ts), so a second turn sent to another instance while the first runs is refused
 * with OpenAI's 400 `conversation_locked` before any upstream call, and goes once the first has answered, reading its
 * items.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { refused } from './setup'
import { type ClaudeCluster, startClaudeCluster } from './claude-cluster'

let cl: ClaudeCluster
let mock: ClaudeCluster['mock']
let c: ClaudeCluster['c']

beforeAll(async () => {
	cl = await startClaudeCluster()
	;({ mock, c } = cl)
}, 60_000)
afterAll(() => cl.close())

const client = (node: number, key: string) => cl.client(node, key)

describe('a conversation turn on one instance', () => {
	it('should refuse a second turn on the other instance while it runs, then let it read the first', async () => {
		const { key } = await c.account(1)
		const conv = await client(0, key).conversations.create()
		mock.faultOnce = { kind: 'slow', firstByteMs: 800 }
		const sent = mock.requests.length
		const first = client(0, key).responses.create({ model: 'qa-claude', input: 'first turn', conversation: conv.id })
		for (let i = 0; i < 250 && mock.requests.length === sent; i++) await Bun.sleep(10)
		expect(mock.requests.length).toBe(sent + 1)
		const err = await refused(client(1, key).responses.create({ model: 'qa-claude', input: 'second turn', conversation: conv.id }))
		expect(err?.status).toBe(400)
		expect(err!.error).toMatchObject({ code: 'conversation_locked', param: 'conversation' })
		expect(mock.requests.length).toBe(sent + 1)
		expect((await first).output_text).toBe('Hello! You said: first turn')
		const next = await client(1, key).responses.create({ model: 'qa-claude', input: 'second turn', conversation: conv.id })
		expect(next.output_text).toBe('Hello! You said: second turn')
		const messages = (mock.requests.at(-1)!.body as { messages: Array<{ role: string }> }).messages
		expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
	})
})
