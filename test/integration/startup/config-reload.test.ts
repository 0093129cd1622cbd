/**
 * GATEWAY_CONFIG applied again at SIGHUP (src/config/config-reload.ts), on a server started as an operator starts
 * it: a channel and a price added and another price changed take effect without a restart; a file that cannot be
 * used changes nothing and is logged; a channel taken out of the file is disabled. Without GATEWAY_CONFIG, SIGHUP
 * ends the process as it always did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import OpenAI from 'openai'
import { adminPost } from '../../helpers/deployed'
import { startProcess } from '../../helpers/start-process'
import { startAnthropicMock, startOpenAIMock } from '../../mocks'

const dir = `${tmpdir()}/switchboard-reload-${process.pid}`
const file = `${dir}/gateway.json`
const ADMIN_KEY = 'reload-admin-key-0123'

let openaiUp: Awaited<ReturnType<typeof startOpenAIMock>>
let anthropicUp: Awaited<ReturnType<typeof startAnthropicMock>>

beforeAll(async () => {
	rmSync(dir, { recursive: true, force: true })
	mkdirSync(dir, { recursive: true })
	openaiUp = await startOpenAIMock({ apiKey: 'up-openai' })
	anthropicUp = await startAnthropicMock({ apiKey: 'up-anthropic' })
})

afterAll(async () => {
	await Promise.all([openaiUp?.stop(), anthropicUp?.stop()])
	rmSync(dir, { recursive: true, force: true })
})

const openaiChannel = () => ({ name: 'oa', type: 'openai', base_url: openaiUp.url, api_key: 'up-openai', models: ['gpt-4o-mini'] })
const anthropicChannel = () => ({ name: 'an', type: 'anthropic', base_url: anthropicUp.url, api_key: 'up-anthropic', models: ['claude-haiku-4-5'] })
const writeConfig = (cfg: unknown) => writeFileSync(file, typeof cfg === 'string' ? cfg : JSON.stringify(cfg, null, 2))

/** Polls `probe` until it gives `want` (5 s at most): a reload is applied in the background of the signal. */
async function eventually<T>(probe: () => Promise<T>, want: T): Promise<T> {
	let got = await probe()
	for (const deadline = Date.now() + 5_000; Date.now() < deadline && !Bun.deepEquals(got, want); await Bun.sleep(100)) got = await probe()
	return got
}

describe('SIGHUP with GATEWAY_CONFIG', () => {
	it('should apply an edited file without a restart, keep what it had when the file is broken, and disable a channel taken out', async () => {
		writeConfig({ channels: [openaiChannel()], models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }] })
		const gw = await startProcess('config-reload', { GATEWAY_CONFIG: file, ADMIN_KEY })
		let stopped = false
		try {
			const post = adminPost(gw.url, ADMIN_KEY)
			const account = await post('/api/accounts', { name: 'reload', balance: 10 })
			const { key } = (await post('/api/tokens', { account_id: account.body.id, name: 'reload' })).body
			const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
			const claude = () =>
				openai.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] }).then(
					(r) => r.choices[0]!.message.content,
					(e) => `${(e as { status?: number }).status} ${(e as { code?: string }).code}`,
				)
			const price = async () => {
				const res = await fetch(`${gw.url}/api/models`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
				const list = (await res.json()) as { data?: { name: string; input_per_mtok: number }[] } | { name: string; input_per_mtok: number }[]
				return (Array.isArray(list) ? list : (list.data ?? [])).find((m) => m.name === 'gpt-4o-mini')?.input_per_mtok
			}
			expect(await claude()).toBe('404 model_not_found')
			expect(await price()).toBe(1)

			// A channel and its price added, another price changed: in effect after the signal, no restart.
			writeConfig({
				channels: [openaiChannel(), anthropicChannel()],
				models: [
					{ name: 'gpt-4o-mini', input_per_mtok: 3, output_per_mtok: 4 },
					{ name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5 },
				],
			})
			gw.signal('SIGHUP')
			expect(await eventually(claude, 'Hello! You said: hi')).toBe('Hello! You said: hi')
			expect(await eventually(price, 3)).toBe(3)

			// A file that cannot be used (a misspelt field) changes nothing, however long one waits.
			writeConfig({ channels: [openaiChannel()], models: [{ name: 'gpt-4o-mini', input_per_mtok: 9, output_per_mtok: 9, cached_input_per_mtok: 1 }] })
			gw.signal('SIGHUP')
			await Bun.sleep(1_000)
			expect(await claude()).toBe('Hello! You said: hi')
			expect(await price()).toBe(3)

			// The anthropic channel taken out of a good file: disabled, as at a start, so its model (still priced) has no
			// channel to serve it.
			writeConfig({ channels: [openaiChannel()], models: [{ name: 'gpt-4o-mini', input_per_mtok: 3, output_per_mtok: 4 }, { name: 'claude-haiku-4-5', input_per_mtok: 1, output_per_mtok: 5 }] })
			gw.signal('SIGHUP')
			expect(await eventually(claude, '503 model_unavailable')).toBe('503 model_unavailable')
			// Still the same process throughout.
			const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still here' }] })
			expect(chat.choices[0]!.message.content).toBe('Hello! You said: still here')

			const said = await gw.stop()
			stopped = true
			expect(said.code).toBe(0)
			const lines = said.stdout.split('\n').filter((l) => l.includes('configuration'))
			expect(lines.filter((l) => l.includes('"msg":"configuration reloaded"'))).toHaveLength(2)
			const refused = lines.filter((l) => l.includes('"msg":"configuration not reloaded: the server goes on with what it had"'))
			expect(refused).toHaveLength(1)
			expect(refused[0]).toContain('unknown field \\"cached_input_per_mtok\\"')
		} finally {
			if (!stopped) await gw.stop()
		}
	}, 60_000)

	it('should end the process at SIGHUP without GATEWAY_CONFIG, as before', async () => {
		const gw = await startProcess('config-reload-none', {})
		gw.signal('SIGHUP')
		const code = await Promise.race([gw.exited, Bun.sleep(10_000).then(() => 'still running')])
		if (code === 'still running') await gw.stop()
		expect(code).not.toBe('still running')
	}, 30_000)
})
