/**
 * Namespace tools on `/v1/responses` for a model of another vendor, as Codex CLI 0.171 sends its sub-agent tools
 * (`{type: "namespace", name: "multi_agent_v1", tools: [function…]}`): every Codex turn on a Claude or Gemini model was
 * a 400 "tools[4] of type 'namespace' is an OpenAI built-in tool". The functions now go upstream flat
 * (`<namespace>__<name>`), the vendor's calls come back as OpenAI gives them (`namespace` beside `name`, in the body
 * and in the stream), and the calls replayed with their namespace reach the vendor under the flat name again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const fn = (name: string, key: string) => ({ type: 'function', name, description: `${name} an agent`, strict: false, parameters: { type: 'object', properties: { [key]: { type: 'string' } }, required: [key], additionalProperties: false } })

/** Codex's shape: plain functions beside a namespace of two (the mock calls the first two tools offered). */
const TOOLS = [
	{ type: 'namespace', name: 'multi_agent_v1', description: 'Tools for spawning and managing sub-agents.', tools: [fn('spawn_agent', 'message'), fn('close_agent', 'target')] },
	fn('exec_command', 'cmd'),
] as unknown as OpenAI.Responses.Tool[]

const FLAT = ['multi_agent_v1__spawn_agent', 'multi_agent_v1__close_agent', 'exec_command']

/** The tool names the vendor was offered and the names of the calls in its history. */
function upstreamNames(up: 'anthropic' | 'gemini') {
	const b = lastRequest(m.mocks[up]).body
	if (up === 'anthropic')
		return { offered: b.tools.map((t: any) => t.name), called: b.messages.flatMap((x: any) => (Array.isArray(x.content) ? x.content : []).filter((p: any) => p.type === 'tool_use').map((p: any) => p.name)) }
	return { offered: b.tools[0].functionDeclarations.map((t: any) => t.name), called: b.contents.flatMap((c: any) => c.parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall.name)) }
}

describe('namespace tools on /v1/responses, converted', () => {
	for (const up of ['anthropic', 'gemini'] as const) {
		for (const stream of [false, true]) {
			it(`should offer ${up} the namespaced functions flat and give their calls back with their namespace (${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'spawn a helper #tools' }]
				const params = { model: MODEL[up], input, tools: TOOLS, store: false }
				let res: OpenAI.Responses.Response
				const itemEvents: Array<{ type: string; namespace?: string; name: string }> = []
				if (stream) {
					const s = acct.openai.responses.stream(params)
					s.on('event', (e) => {
						if ((e.type === 'response.output_item.added' || e.type === 'response.output_item.done') && e.item.type === 'function_call')
							itemEvents.push({ type: e.type, namespace: e.item.namespace, name: e.item.name })
						if (e.type === 'response.function_call_arguments.done') itemEvents.push({ type: e.type, name: (e as unknown as { name: string }).name })
					})
					res = await s.finalResponse()
				} else res = await acct.openai.responses.create(params)
				expect(upstreamNames(up).offered).toEqual(FLAT)
				const calls = res.output.flatMap((o) => (o.type === 'function_call' ? [o] : []))
				expect(calls.map((c) => ({ namespace: c.namespace, name: c.name }))).toEqual([
					{ namespace: 'multi_agent_v1', name: 'spawn_agent' },
					{ namespace: 'multi_agent_v1', name: 'close_agent' },
				])
				if (stream)
					expect(itemEvents).toEqual(
						['spawn_agent', 'close_agent'].flatMap((name) => [
							{ type: 'response.output_item.added', namespace: 'multi_agent_v1', name },
							{ type: 'response.function_call_arguments.done', name },
							{ type: 'response.output_item.done', namespace: 'multi_agent_v1', name },
						]),
					)

				// Codex replays each call as it got it, with its output; the vendor must see its own (flat) names again.
				const replay = calls.flatMap((c): OpenAI.Responses.ResponseInputItem[] => [
					{ type: 'function_call', call_id: c.call_id, name: c.name, namespace: c.namespace, arguments: c.arguments } as OpenAI.Responses.ResponseInputItem,
					{ type: 'function_call_output', call_id: c.call_id, output: `done ${c.name}` },
				])
				const res2 = await acct.openai.responses.create({ ...params, input: [...input, ...replay] })
				expect(res2.output_text).toBe('Tool results: done spawn_agent; done close_agent')
				expect(upstreamNames(up).called).toEqual(['multi_agent_v1__spawn_agent', 'multi_agent_v1__close_agent'])
				expect((await usageRows(m, acct.accountId)).map((r) => r.status)).toEqual([200, 200])
			})
		}
	}

	it('should refuse a custom tool inside a namespace for another vendor with a 400 naming it', async () => {
		const acct = await m.account()
		const tools = [{ type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'custom', name: 'patch', description: 'freeform' }] }] as unknown as OpenAI.Responses.Tool[]
		const e = await acct.openai.responses.create({ model: MODEL.anthropic, input: 'hi', tools }).catch((x) => x)
		expect(e.status).toBe(400)
		expect(e.error.param).toBe('tools[0]')
		expect(e.error.message).toContain("namespace 'ns' is not a function tool")
	})
})
