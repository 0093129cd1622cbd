/**
 * `POST /api/channels` takes `enabled`, as GATEWAY_CONFIG's channel entries do: a channel can be created disabled
 * (it serves no request until enabled), instead of the field being refused with a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp

const channel = { type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'up-key', models: ['m'] }

beforeAll(async () => {
	app = await startTestApp()
}, 120_000)
afterAll(async () => {
	await app.close()
})

describe('creating a channel with enabled', () => {
	it('should create it disabled with enabled: false, as the config file does, and enable it later', async () => {
		const c = await app.admin('/api/channels', { body: { ...channel, name: 'born-off', enabled: false } })
		expect(c.status).toBe(201)
		expect(c.body).toMatchObject({ name: 'born-off', status: 'disabled', disabled_reason: 'disabled by an administrator' })
		expect((await app.admin(`/api/channels/${c.body.id}`)).body.status).toBe('disabled')
		const on = await app.admin(`/api/channels/${c.body.id}/enable`, { method: 'POST' })
		expect(on.body).toMatchObject({ status: 'enabled', disabled_reason: null })
	})

	it('should create it enabled with enabled: true or without the field', async () => {
		for (const [name, extra] of [
			['born-on', { enabled: true }],
			['default-on', {}],
		] as const) {
			const c = await app.admin('/api/channels', { body: { ...channel, name, ...extra } })
			expect(c.status).toBe(201)
			expect(c.body).toMatchObject({ name, status: 'enabled', disabled_reason: null })
		}
	})

	it('should refuse an enabled that is not a boolean with 400 naming it, creating nothing', async () => {
		const c = await app.admin('/api/channels', { body: { ...channel, name: 'bad-enabled', enabled: 'no' } })
		expect(c.status).toBe(400)
		expect(JSON.stringify(c.body)).toContain('enabled')
		expect((await app.admin('/api/channels')).body.data.map((x: { name: string }) => x.name)).not.toContain('bad-enabled')
	})
})
