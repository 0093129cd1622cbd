/**
 * Converted Responses copies (converted-items.ts) across a long agent session and across instances, through the
 * official `openai` SDK and the Vercel AI SDK, on two instances sharing one database:
 * - a chain of turns keeps each turn's own input and output only: the stored size grows linearly (it grew
 *   quadratically when each copy held its whole input);
 * - the copy is written before the client reads the end of the answer, so a continuation sent at once to the other
 *   instance finds it (it got 404 / 400 when the copy was written after the answer), JSON and streamed, also when the
 *   database is slow to write; a failed write still completes the answer;
 * - copies written before chains were (whole input, no link) still expand; an earlier turn a later one continues
 *   outlives its deletion (hidden) and the purge of its age, for that chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, streamText } from 'ai'
import type OpenAI from 'openai'
import type { Response as OpenAIResponse, ResponseInputItem } from 'openai/resources/responses/responses'
import { convertedItems as itemsTable } from '../../../src/db/schema'
import type { Db } from '../../../src/db/client'
import { purgeConvertedItems } from '../../../src/modules/responses/converted-items'
import { lastRequest, refused } from './setup'
import { type ClaudeCluster, startClaudeCluster } from './claude-cluster'

let cl: ClaudeCluster
let db: Db
/** Every converted_items insert: how long it took (the write the answer waits for). */
const insertMs: number[] = []
/** What the next converted_items inserts do instead of writing at once. */
let slowMs = 0
let failing = false

beforeAll(async () => {
	cl = await startClaudeCluster()
	// One Db on PGlite (both instances share it); one pool per instance on PostgreSQL: each is tapped.
	for (const node of cl.c.nodes) tapInserts(node.svc.db)
	db = cl.c.t.db
}, 60_000)
afterAll(() => cl.close())

/** Times the copy's inserts, and makes them slow or fail when a test asks (a loaded or unreachable database). */
function tapInserts(d: Db) {
	const orm = d.orm as any
	if (orm.__tapped) return
	orm.__tapped = true
	const insert = orm.insert.bind(orm)
	orm.insert = (table: unknown) => {
		const b = insert(table)
		if (table !== itemsTable) return b
		return {
			values: (rows: unknown) => ({
				onConflictDoNothing: () => {
					const q = b.values(rows).onConflictDoNothing()
					const run = async () => {
						if (slowMs) await Bun.sleep(slowMs)
						if (failing) throw new Error('database unreachable')
						const t0 = performance.now()
						await q
						insertMs.push(performance.now() - t0)
					}
					return { then: (ok: (v: unknown) => unknown, err: (e: unknown) => unknown) => run().then(ok, err) }
				},
			}),
		}
	}
}

/** The account's stored copies: rows and bytes. */
async function storedSize(accountId: number): Promise<{ rows: number; bytes: number }> {
	const [r] = await db.sql.query<{ rows: number; bytes: number }>(
		'SELECT count(*)::int AS rows, coalesce(sum(octet_length(item::text) + coalesce(octet_length(input::text), 0)), 0)::int AS bytes FROM converted_items WHERE account_id = $1',
		[accountId],
	)
	return r!
}

const TOOL = { type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }
/** A tool output of about 1.6 KB, as an agent's file read or search result. */
const toolOutput = (k: number) => Array.from({ length: 200 }, (_, i) => `w${k}x${i}`).join(' ')

describe('a long converted chain', () => {
	it('should store O(N) rows and bytes for 60 turns with tool outputs, each turn on the other instance at once', async () => {
		const { accountId, key } = await cl.c.account(50)
		const sizes: Array<{ rows: number; bytes: number }> = []
		let prev: OpenAIResponse | undefined
		for (let turn = 0; turn < 60; turn++) {
			// Even turns ask for a tool call, odd ones send its output: the agent loop of a coding assistant.
			const call = prev?.output.find((o) => o.type === 'function_call')
			const input: ResponseInputItem[] =
				turn % 2 === 1 && call?.type === 'function_call'
					? [{ type: 'function_call_output', call_id: call.call_id, output: toolOutput(turn) }]
					: [{ role: 'user', content: `#tools turn ${turn}` }]
			prev = await cl.client(turn % 2, key).responses.create({
				model: 'qa-claude',
				input,
				tools: [TOOL],
				parallel_tool_calls: false,
				...(prev && { previous_response_id: prev.id }),
			})
			expect(prev.status).toBe('completed')
			if (turn % 20 === 19) sizes.push(await storedSize(accountId))
		}
		// The last upstream request held the whole session: 30 tool calls and their 30 outputs.
		const body = lastRequest(cl.mock).body as { messages: Array<{ content: unknown }> }
		const blocks = body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string }>) : []))
		expect(blocks.filter((b) => b.type === 'tool_use')).toHaveLength(30)
		expect(blocks.filter((b) => b.type === 'tool_result')).toHaveLength(30)
		// input_items lists the whole input of the last turn: 59 earlier turns' inputs and outputs, and its own.
		const listed: Array<{ type: string }> = []
		for await (const item of cl.client(0, key).responses.inputItems.list(prev!.id, { limit: 100 })) listed.push(item)
		expect(listed).toHaveLength(30 + 30 + 30 + 29)
		expect(listed[0]!.type).toBe('function_call_output')
		expect(listed.at(-1)!.type).toBe('message')
		// Linear: the last 20 turns add about what the middle 20 did (whole inputs: 1.6x and more).
		const [s20, s40, s60] = sizes as [{ rows: number; bytes: number }, { rows: number; bytes: number }, { rows: number; bytes: number }]
		const grew = (s60.bytes - s40.bytes) / (s40.bytes - s20.bytes)
		console.log(`converted chain: stored bytes after 20/40/60 turns ${s20.bytes}/${s40.bytes}/${s60.bytes} (growth ratio ${grew.toFixed(2)}), rows ${s20.rows}/${s40.rows}/${s60.rows}`)
		expect(grew).toBeLessThan(1.15)
		expect(s60.rows - s40.rows).toBe(s40.rows - s20.rows)
		expect(s60.bytes).toBeLessThan(3.3 * s20.bytes)
		const sorted = [...insertMs].sort((a, b) => a - b)
		console.log(
			`converted copy write (${db.kind}): median ${sorted[sorted.length >> 1]!.toFixed(2)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(2)} ms over ${sorted.length} inserts`,
		)
	}, 120_000)
})

/** One turn by the `openai` SDK on instance `node`, streamed or not. */
const ask = (oa: OpenAI, stream: boolean, body: { model: string; input: ResponseInputItem[] | string; previous_response_id?: string }) =>
	stream ? oa.responses.stream(body).finalResponse() : oa.responses.create(body)

describe('continuing at once on the other instance', () => {
	for (const stream of [false, true]) {
		it(`should find the copy by previous_response_id and item_reference on instance B (${stream ? 'stream' : 'JSON'}), also when the write is slow`, async () => {
			const { key } = await cl.c.account(1)
			slowMs = 150
			try {
				const first = await ask(cl.client(0, key), stream, { model: 'qa-claude', input: 'remember the lighthouse' })
				// No waiting: the next request goes to B the moment A's answer has ended.
				const next = await ask(cl.client(1, key), stream, { model: 'qa-claude', input: 'and then?', previous_response_id: first.id })
				expect(next.previous_response_id).toBe(first.id)
				expect(JSON.stringify(lastRequest(cl.mock).body)).toContain('remember the lighthouse')
				const refs = next.output.map((o) => ({ type: 'item_reference' as const, id: o.id! }))
				const third = await ask(cl.client(0, key), stream, { model: 'qa-claude', input: [{ role: 'user', content: 'again' }, ...refs, { role: 'user', content: 'last' }] })
				expect(third.output_text).toBe('Hello! You said: last')
			} finally {
				slowMs = 0
			}
		})

		it(`should chain by the Vercel AI SDK's previousResponseId across instances (${stream ? 'streamText' : 'generateText'})`, async () => {
			const { key } = await cl.c.account(1)
			const model = (node: number) => createOpenAI({ apiKey: key, baseURL: `${cl.c.nodes[node]!.url}/v1` }).responses('qa-claude')
			const say = async (node: number, prompt: string, previousResponseId?: string) => {
				const opts = { model: model(node), prompt, providerOptions: { openai: previousResponseId ? { previousResponseId } : {} } }
				if (!stream) {
					const r = await generateText(opts)
					return { text: r.text, id: String(r.providerMetadata?.openai?.responseId) }
				}
				const s = streamText(opts)
				const text = await s.text
				return { text, id: String((await s.providerMetadata)?.openai?.responseId) }
			}
			slowMs = 150
			try {
				const one = await say(0, 'ai sdk first words')
				const two = await say(1, 'ai sdk second words', one.id)
				await say(0, 'ai sdk third words', two.id)
			} finally {
				slowMs = 0
			}
			const text = JSON.stringify(lastRequest(cl.mock).body)
			for (const said of ['ai sdk first words', 'ai sdk second words', 'ai sdk third words']) expect(text).toContain(said)
		})
	}

	it('should complete the answer when the write fails, and then answer 400 for continuing it', async () => {
		const { key } = await cl.c.account(1)
		failing = true
		let json: OpenAIResponse, streamed: OpenAIResponse
		try {
			json = await ask(cl.client(0, key), false, { model: 'qa-claude', input: 'lost words' })
			streamed = await ask(cl.client(0, key), true, { model: 'qa-claude', input: 'lost streamed words' })
		} finally {
			failing = false
		}
		expect(json.status).toBe('completed')
		expect(streamed.status).toBe('completed')
		for (const r of [json, streamed]) {
			const err = await refused(ask(cl.client(1, key), false, { model: 'qa-claude', input: 'go on', previous_response_id: r.id }))
			expect(err!.status).toBe(400)
		}
	})
})

describe('copies written before chains were', () => {
	it('should expand a copy holding its whole input (no link), and a chain continuing it, on either instance', async () => {
		const { key } = await cl.c.account(1)
		const answered = await cl.client(0, key).responses.create({ model: 'qa-claude', input: 'the older answer' })
		// What an older gateway kept for a third turn: its whole input (two earlier turns expanded), no previous_id.
		const old = `resp_older${answered.id.slice(4)}`
		const whole = [
			{ itemId: 'msg_old1', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'old turn one' }] } },
			{ itemId: 'msg_old2', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'old answer one', annotations: [] }] } },
			{ itemId: 'msg_old3', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'old turn two' }] } },
		]
		await db.sql.query(
			`INSERT INTO converted_items (item_id, account_id, item, input) SELECT $2, account_id, item || jsonb_build_object('id', $3::text), $4::jsonb FROM converted_items WHERE item_id = $1`,
			[`response:${answered.id}`, `response:${old}`, old, JSON.stringify(whole)],
		)
		const next = await cl.client(1, key).responses.create({ model: 'qa-claude', input: 'new turn', previous_response_id: old })
		const then = await cl.client(0, key).responses.create({ model: 'qa-claude', input: 'newer turn', previous_response_id: next.id })
		const text = JSON.stringify(lastRequest(cl.mock).body)
		const said = ['old turn one', 'old answer one', 'old turn two', answered.output_text, 'new turn', next.output_text, 'newer turn']
		for (const s of said) expect(text).toContain(s)
		for (let i = 1; i < said.length; i++) expect(text.indexOf(said[i - 1]!)).toBeLessThan(text.lastIndexOf(said[i]!))
		// The new copies hold only their own input.
		const [row] = await db.sql.query<{ input: unknown; previous_id: string }>('SELECT input, previous_id FROM converted_items WHERE item_id = $1', [`response:${then.id}`])
		expect(row!.previous_id).toBe(next.id)
		expect(typeof row!.input === 'string' ? JSON.parse(row!.input) : row!.input).toHaveLength(1)
		// input_items of the newest: the old whole input, the old answer, the new turn, its answer, the newer turn.
		const listed = await cl.client(1, key).responses.inputItems.list(then.id, { order: 'asc' })
		expect(listed.data.map((i) => i.id).slice(0, 3)).toEqual(['msg_old1', 'msg_old2', 'msg_old3'])
		expect(listed.data).toHaveLength(7)
	})

	it('should keep an earlier turn another one continues when it is deleted: gone for the client, still in the chain', async () => {
		const { key } = await cl.c.account(1)
		const one = await cl.client(0, key).responses.create({ model: 'qa-claude', input: 'deleted turn words' })
		const two = await cl.client(0, key).responses.create({ model: 'qa-claude', input: 'kept turn words', previous_response_id: one.id })
		await cl.client(1, key).responses.delete(one.id)
		expect((await refused(cl.client(1, key).responses.retrieve(one.id)))!.status).toBe(404)
		expect((await refused(cl.client(1, key).responses.create({ model: 'qa-claude', input: 'x', previous_response_id: one.id })))!.status).toBe(400)
		await cl.client(1, key).responses.create({ model: 'qa-claude', input: 'after the deletion', previous_response_id: two.id })
		expect(JSON.stringify(lastRequest(cl.mock).body)).toContain('deleted turn words')
	})

	it('should purge an old turn only once no younger kept turn continues it', async () => {
		const { accountId, key } = await cl.c.account(1)
		const one = await cl.client(0, key).responses.create({ model: 'qa-claude', input: 'oldest words' })
		const two = await cl.client(1, key).responses.create({ model: 'qa-claude', input: 'older words', previous_response_id: one.id })
		const three = await cl.client(0, key).responses.create({ model: 'qa-claude', input: 'young words', previous_response_id: two.id })
		const age = (id: string, days: number) =>
			db.sql.query(`UPDATE converted_items SET created_at = now() - make_interval(days => $2) WHERE item_id = $1`, [`response:${id}`, days])
		const kept = async () =>
			(await db.sql.query<{ item_id: string }>(`SELECT item_id FROM converted_items WHERE account_id = $1 AND item_id LIKE 'response:%'`, [accountId])).map((r) => r.item_id).sort()
		await age(one.id, 40)
		await age(two.id, 35)
		await purgeConvertedItems(db, 30)
		expect(await kept()).toEqual([`response:${one.id}`, `response:${two.id}`, `response:${three.id}`].sort())
		const four = await cl.client(1, key).responses.create({ model: 'qa-claude', input: 'still whole', previous_response_id: three.id })
		expect(JSON.stringify(lastRequest(cl.mock).body)).toContain('oldest words')
		// The younger turn `four` keeps the whole chain; once it is old too, the chain goes.
		await age(three.id, 31)
		await purgeConvertedItems(db, 30)
		expect(await kept()).toHaveLength(4)
		await age(four.id, 31)
		await purgeConvertedItems(db, 30)
		expect(await kept()).toEqual([])
	})
})
