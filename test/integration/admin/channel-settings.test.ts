/**
 * Channel `settings` and `base_url` through the management API (QA report, item 5): one schema with the config file
 * (src/config/channel-settings.ts), so a misspelt key or a wrong type is refused with a 400 naming the field rather
 * than stored and then ignored by the relay, and a base URL that is not one is refused in both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let id: number

const channel = { name: 'settings-c', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'up-key', models: ['m'] }

beforeAll(async () => {
	app = await startTestApp()
	const c = await app.admin('/api/channels', { body: { ...channel, settings: { timeouts: { first_byte_ms: 5000 } } } })
	expect(c.status).toBe(201)
	id = c.body.id
}, 120_000)
afterAll(async () => {
	await app.close()
})

const stored = async () => (await app.admin(`/api/channels/${id}`)).body.settings

describe('channel settings', () => {
	it('should refuse a misspelt or unknown key with 400 naming it, storing nothing', async () => {
		for (const [settings, field] of [
			[{ timeoutz: { first_byte_ms: 100 } }, 'settings.timeoutz'],
			[{ timeouts: { first_byte_ms: 100, idel_ms: 100 } }, 'settings.timeouts.idel_ms'],
			[{ header: { 'x-a': 'b' } }, 'settings.header'],
		] as const) {
			const r = await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { settings } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: field })
			expect(r.body.error.message).toContain(field)
		}
		expect(await stored()).toEqual({ timeouts: { first_byte_ms: 5000 } })
	})

	it('should refuse a value of the wrong type with 400 naming the field', async () => {
		for (const [settings, field] of [
			[{ timeouts: { first_byte_ms: 'abc' } }, 'settings.timeouts.first_byte_ms'],
			[{ timeouts: { idle_ms: -1 } }, 'settings.timeouts.idle_ms'],
			[{ timeouts: { idle_ms: 1.5 } }, 'settings.timeouts.idle_ms'],
			[{ headers: { 'x-title': 7 } }, 'settings.headers.x-title'],
			[{ responses_api: 'no' }, 'settings.responses_api'],
			[{ timeouts: 100 }, 'settings.timeouts'],
			[{ base_models: { 'profile-a': 'not a model id' } }, 'settings.base_models.profile-a'],
			// A key with `/` or `~` (a Bedrock inference profile's ARN) is named as written, not as a JSON pointer escapes it.
			[{ base_models: { 'arn:aws:bedrock:us-east-1:1:application-inference-profile/a': 'not a model id' } }, 'settings.base_models.arn:aws:bedrock:us-east-1:1:application-inference-profile/a'],
			[{ headers: { 'x~1': 7 } }, 'settings.headers.x~1'],
			// A submit passed through unbilled would be a free Midjourney job (passthrough/task-routes.ts).
			[{ extra_task_paths: ['GET /mj/notify/status', 'POST /mj/submit/free'] }, 'settings.extra_task_paths.1'],
		] as const) {
			const r = await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { settings } })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe(field)
			expect(r.body.error.message).toContain(field)
		}
		const created = await app.admin('/api/channels', { body: { ...channel, name: 'settings-new', settings: { timeouts: { first_byte_ms: 'abc' } } } })
		expect(created.status).toBe(400)
		expect(created.body.error.param).toBe('settings.timeouts.first_byte_ms')
		expect((await app.admin('/api/channels')).body.data.map((c: { name: string }) => c.name)).not.toContain('settings-new')
		expect(await stored()).toEqual({ timeouts: { first_byte_ms: 5000 } })
	})

	it('should store every documented setting', async () => {
		const settings = { timeouts: { first_byte_ms: 100, idle_ms: 2000 }, headers: { 'http-referer': 'https://example.com' }, responses_api: false }
		const r = await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { settings } })
		expect(r.status).toBe(200)
		expect(r.body.settings).toEqual(settings)
		expect(await stored()).toEqual(settings)
	})

	it("should store a bedrock channel's guardrail, and refuse its identifier without its version (or a trace alone) with 400 naming the field", async () => {
		const bedrock = { name: 'guarded-br', type: 'bedrock', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', api_key: 'ABSKQmVkcm9ja0FQSUtleS1tb2Nr', models: ['m'] }
		const alone = await app.admin('/api/channels', { body: { ...bedrock, settings: { guardrail_identifier: 'gr0abc123xyz' } } })
		expect(alone.status).toBe(400)
		expect(alone.body.error).toMatchObject({ type: 'invalid_request_error', param: 'settings.guardrail_version' })
		expect(alone.body.error.message).toBe('settings.guardrail_version: guardrail_identifier needs guardrail_version (a number such as "1", or "DRAFT"): Bedrock refuses a guardrail without its version')
		expect((await app.admin('/api/channels')).body.data.map((c: { name: string }) => c.name)).not.toContain('guarded-br')
		const settings = { guardrail_identifier: 'gr0abc123xyz', guardrail_version: 'DRAFT', guardrail_trace: 'enabled', guardrail_stream_mode: 'sync' }
		const created = await app.admin('/api/channels', { body: { ...bedrock, settings } })
		expect(created.status).toBe(201)
		expect(created.body.settings).toEqual(settings)
		for (const [bad, field] of [
			[{ guardrail_version: '2' }, 'settings.guardrail_identifier'],
			[{ guardrail_trace: 'enabled' }, 'settings.guardrail_trace'],
			[{ guardrail_identifier: 'gr0abc123xyz', guardrail_version: 'latest' }, 'settings.guardrail_version'],
			[{ guardrail_identifier: 'arn:aws:bedrock:us-east-1:1:guardrail/x', guardrail_version: '1' }, 'settings.guardrail_identifier'],
		] as const) {
			const r = await app.admin(`/api/channels/${created.body.id}`, { method: 'PATCH', body: { settings: bad } })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe(field)
			expect(r.body.error.message).toContain(field)
		}
		expect((await app.admin(`/api/channels/${created.body.id}`)).body.settings).toEqual(settings)
	})

	it('should refuse a base_url that is not an http(s) URL, as the config file does', async () => {
		for (const base_url of ['not a url', 'http://', 'https:// x/v1', 'ftp://host/v1']) {
			const r = await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { base_url } })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe('base_url')
			expect(r.body.error.message).toContain('http:// or https:// URL')
		}
		expect((await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { base_url: 'https://[::1]:8443/v1' } })).status).toBe(200)
	})
})
