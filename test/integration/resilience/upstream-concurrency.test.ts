/**
 * A server started as operators start it (`bun src/index.ts`, no BUN_CONFIG_MAX_HTTP_REQUESTS in its environment)
 * calls its upstream more than 256 times at once. Bun's fetch queues everything past 256 in flight unless that
 * variable is set when the process starts (src/lib/runtime-settings.ts): a gateway's upstream calls last as long as their
 * answers, so the 257th concurrent request would wait for another to finish before it even reached the vendor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Deployment, type Server, deploy } from './server-process'

const CONCURRENT = 300
const HOLD_MS = 1500

let upstream: ReturnType<typeof Bun.serve>
let inFlight = 0
let peak = 0
let d: Deployment
let server: Server

beforeAll(async () => {
	upstream = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		idleTimeout: 0,
		async fetch() {
			inFlight++
			peak = Math.max(peak, inFlight)
			await Bun.sleep(HOLD_MS)
			inFlight--
			return Response.json({
				id: 'chatcmpl-1',
				object: 'chat.completion',
				created: 1,
				model: 'gpt-4o-mini',
				choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, logprobs: null, finish_reason: 'stop' }],
				usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
			})
		},
	})
	d = await deploy({
		channels: [{ name: 'slow', type: 'openai', base_url: `http://127.0.0.1:${upstream.port}/v1`, api_key: 'up-key', models: ['gpt-4o-mini'] }],
		models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
	} as never)
	server = await d.start()
})

afterAll(async () => {
	await d.close()
	upstream.stop(true)
})

describe('upstream concurrency of a server started without BUN_CONFIG_MAX_HTTP_REQUESTS', () => {
	it(`should have all ${CONCURRENT} requests at the upstream at once`, async () => {
		const account = await d.admin(server, '/api/accounts', { name: 'many', balance: 100 })
		const token = await d.admin(server, '/api/tokens', { account_id: account.id, name: 'many' })
		// The client is a process of its own with a raised limit: this test process's fetch has Bun's 256 too.
		const client = Bun.spawn(
			[
				process.execPath,
				'-e',
				`const r = await Promise.all(Array.from({ length: ${CONCURRENT} }, () => fetch(${JSON.stringify(`${server.url}/v1/chat/completions`)}, { method: 'POST', headers: { authorization: 'Bearer ${token.key}', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) }).then((x) => x.status)))
				console.log(JSON.stringify(r.reduce((a, s) => ({ ...a, [s]: (a[s] ?? 0) + 1 }), {})))`,
			],
			{ env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '1024' }, stdout: 'pipe', stderr: 'pipe' },
		)
		const [out, err] = await Promise.all([new Response(client.stdout).text(), new Response(client.stderr).text()])
		await client.exited
		expect(err).toBe('')
		expect(JSON.parse(out)).toEqual({ 200: CONCURRENT })
		expect(peak).toBe(CONCURRENT)
		// The relaunch kept the process: the server logs no warning about the limit.
		expect(server.output()).not.toContain('BUN_CONFIG_MAX_HTTP_REQUESTS')
	}, 60_000)
})
