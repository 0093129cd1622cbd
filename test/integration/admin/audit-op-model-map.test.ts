/**
 * A `model_map` entry whose public name the channel's `models` do not list is never used: routing finds the channel
 * by `models` before it renames, so clients asking for that name get 404 whatever the map says. The config file and
 * the management API refuse such an entry naming it, instead of storing it silently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ConfigError, parseGatewayConfig } from '../../../src/config/gateway-file'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp

beforeAll(async () => {
	app = await startTestApp()
}, 60_000)
afterAll(() => app.close())

const channel = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['gpt-4o-mini'], ...extra })

describe('model_map', () => {
	it('should refuse a channel mapping a name its models do not list, 400 naming the entry, and store nothing', async () => {
		const r = await app.admin('/api/channels', { body: channel('fast-lane', { model_map: { fast: 'gpt-4.1-mini' } }) })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('model_map.fast')
		expect(r.body.error.message).toContain('add "fast" to models')
		expect((await app.admin('/api/channels')).body.data.map((c: { name: string }) => c.name)).not.toContain('fast-lane')
		// Listed exactly or matched by a glob, the alias is served.
		expect((await app.admin('/api/channels', { body: channel('listed', { models: ['gpt-4o-mini', 'fast'], model_map: { fast: 'gpt-4.1-mini' } }) })).status).toBe(201)
		expect((await app.admin('/api/channels', { body: channel('globbed', { models: ['gpt-4.1*'], model_map: { 'gpt-4.1-latest': 'gpt-4.1-2025-04-14' } }) })).status).toBe(201)
	})

	it('should refuse a PATCH that maps an unlisted name, or drops from models a name the stored map uses', async () => {
		const c = await app.admin('/api/channels', { body: channel('patched', { models: ['gpt-4o-mini', 'quick'], model_map: { quick: 'gpt-4o-mini' } }) })
		expect(c.status).toBe(201)
		const map = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { model_map: { quick: 'gpt-4o-mini', cheap: 'gpt-4o-mini' } } })
		expect([map.status, map.body.error?.param]).toEqual([400, 'model_map.cheap'])
		const narrowed = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { models: ['gpt-4o-mini'] } })
		expect([narrowed.status, narrowed.body.error?.param]).toEqual([400, 'model_map.quick'])
		expect((await app.admin(`/api/channels/${c.body.id}`)).body).toMatchObject({ models: ['gpt-4o-mini', 'quick'], model_map: { quick: 'gpt-4o-mini' } })
		// Both together, or a change that leaves them consistent, is fine.
		expect((await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { models: ['gpt-4o-mini'], model_map: {} } })).status).toBe(200)
		expect((await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { weight: 3 } })).status).toBe(200)
	})

	it('should stop a start on such a config file, naming the file, the entry and the key', () => {
		const at = (raw: unknown) => {
			try {
				parseGatewayConfig(raw, 'gw.json')
				return 'accepted'
			} catch (e) {
				return e instanceof ConfigError ? e.message : `unexpected: ${String(e)}`
			}
		}
		expect(at({ channels: [channel('x', { model_map: { fast: 'gpt-4.1-mini' } })] })).toStartWith('gw.json: channels[0] ("x"): field "model_map.fast": "fast" is not among the channel\'s models')
		expect(at({ channels: [channel('x', { models: ['gpt-4o-mini', 'fast'], model_map: { fast: 'gpt-4.1-mini' } })] })).toBe('accepted')
	})
})
