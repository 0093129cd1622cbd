/**
 * Stopping the server from a terminal: Ctrl-C reaches the server twice when it runs under `bun run server` or `npx`
 * (the terminal sends SIGINT to the whole process group, and the wrapper passes its own on). That is one stop: open
 * streams finish and are billed, the usage rows are written. A second signal sent later cuts them (billed for what
 * they used, `shutdown`); only then does the process stop without waiting for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { auth, body, ENDPOINT } from './rig'
import { deploy, type Deployment, readFrames, type Server } from './server-process'

let mock: VendorMock
let dep: Deployment

beforeAll(async () => {
	// 100 ms between chunks: the answer below takes about 4 s.
	mock = await startOpenAIMock({ apiKey: 'up-sig-key', chunkDelayMs: 100, record: false })
	dep = await deploy(
		{
			channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-sig-key', models: ['sig'], model_map: { sig: 'gpt-4o-mini' } }],
			models: [{ name: 'sig', input_per_mtok: 100, output_per_mtok: 200 }],
		},
		{ SHUTDOWN_GRACE_MS: '20000', LOG_LEVEL: 'info' },
	)
}, 60_000)
afterAll(async () => {
	await dep.close()
	await mock.stop()
})

const PROMPT = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')

async function streamOn(server: Server, key: string) {
	const res = await fetch(server.url + ENDPOINT.chat, { method: 'POST', headers: { 'content-type': 'application/json', ...auth('chat', key) }, body: JSON.stringify(body('sig', PROMPT, true, 50)) })
	expect(res.status).toBe(200)
	return readFrames(res, 2)
}

const rows = () => dep.withDb((db) => db.sql.query<{ end_reason: string; cost: string }>('SELECT end_reason, cost FROM usage_logs ORDER BY id'))

describe('stop signals', () => {
	it('should take a SIGINT relayed twice at once as one stop: the stream ends in full and is billed', async () => {
		const server = await dep.start()
		const acct = await dep.admin(server, '/api/accounts', { name: 'sig', balance: 5 })
		const tok = await dep.admin(server, '/api/tokens', { account_id: acct.id, name: 'k' })
		const s = await streamOn(server, tok.key)
		server.proc.kill('SIGINT')
		await Bun.sleep(20)
		server.proc.kill('SIGINT')
		const rest = await s.rest()
		expect(await server.exited).toBe(0)
		expect(rest).toContain('word39')
		expect(rest.trimEnd()).toEndWith('data: [DONE]')
		const r = await rows()
		expect(r.map((x) => x.end_reason)).toEqual(['ok'])
		expect(Number(r[0]!.cost)).toBeGreaterThan(0)
	}, 60_000)

	it('should cut the stream at a second signal sent later, billed for what it used', async () => {
		const before = (await rows()).length
		const server = await dep.start()
		const tok = await dep.admin(server, '/api/tokens', { account_id: (await dep.admin(server, '/api/accounts', { name: 'sig2', balance: 5 })).id, name: 'k' })
		const s = await streamOn(server, tok.key)
		server.proc.kill('SIGINT')
		await Bun.sleep(1_200)
		server.proc.kill('SIGINT')
		const rest = await s.rest().catch(() => '')
		expect(await server.exited).toBe(0)
		expect(rest).not.toContain('word39')
		expect(rest).toContain('shutting_down')
		const r = (await rows()).slice(before)
		expect(r.map((x) => x.end_reason)).toEqual(['shutdown'])
		expect(Number(r[0]!.cost)).toBeGreaterThan(0)
	}, 60_000)
})
