/**
 * Two QA findings, refused by the server whatever the client: a model added with no price at all (it was saved at
 * $0/$0, served free without anyone saying so; an explicit 0 still prices a model free), and a password of spaces
 * (it passed the 8-character rule at sign-up, on a new user and on a password change).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../../unit/console/console-app'

let app: ConsoleApp
beforeAll(async () => {
	app = await startConsoleApp()
}, 60_000)
afterAll(() => app.close())

const names = async () => (await app.admin('/api/models')).body.data.map((m: { name: string }) => m.name)

describe('POST /api/models without a price', () => {
	it('should answer 400 naming the price fields, and store nothing', async () => {
		for (const body of [{ name: 'blank' }, { name: 'blank', max_output_tokens: 100, context_window: 1000 }, { name: 'blank', us_inference_multiplier: 1.1 }]) {
			const r = await app.admin('/api/models', { body })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe('input_per_mtok')
			expect(r.body.error.message).toContain('input_per_mtok and output_per_mtok (0 serves the model free)')
		}
		expect(await names()).not.toContain('blank')
	})

	it('should take an explicit 0 (free on purpose) and a model priced by another unit only', async () => {
		const free = await app.admin('/api/models', { body: { name: 'free-model', input_per_mtok: 0 } })
		expect(free.status).toBe(201)
		expect(free.body).toMatchObject({ input_per_mtok: 0, output_per_mtok: 0 })
		expect((await app.admin('/api/models', { body: { name: 'image-model', per_image: 0.04 } })).status).toBe(201)
		expect((await app.admin('/api/models', { body: { name: 'flat-model', per_request: 0.01 } })).status).toBe(201)
	})
})

describe('a password of spaces', () => {
	it('should be refused at sign-up, on a new user and on a password change, naming the field', async () => {
		await app.admin('/api/settings', { method: 'PATCH', body: { signup_enabled: true } })
		const signup = await app.post('/api/signup', { username: 'dave', password: '        ' })
		expect(signup.status).toBe(400)
		expect(signup.body.error).toMatchObject({ param: 'password', message: 'password: must hold something other than spaces' })
		expect((await app.post('/api/session', { username: 'dave', password: '        ' })).status).toBe(401)

		const user = await app.admin('/api/users', { body: { username: 'erin', password: '\t \t \t \t ' } })
		expect(user.status).toBe(400)
		expect(user.body.error.param).toBe('password')
		// Zero-width characters show as nothing, as spaces do.
		const invisible = await app.admin('/api/users', { body: { username: 'erin', password: '\u200b'.repeat(8) } })
		expect([invisible.status, invisible.body.error?.param]).toEqual([400, 'password'])
		const made = await app.admin('/api/users', { body: { username: 'erin', password: '  spaced out  ' } })
		expect(made.status).toBe(201)
		expect((await app.admin(`/api/users/${made.body.id}`, { method: 'PATCH', body: { password: '          ' } })).status).toBe(400)

		const admin = await app.signIn('admin', ADMIN_PASSWORD)
		const change = await admin.call('/api/users/me/password', { body: { current_password: ADMIN_PASSWORD, new_password: '         ' } })
		expect(change.status).toBe(400)
		expect(change.body.error).toMatchObject({ param: 'new_password', message: 'new_password: must hold something other than spaces' })
		await app.signIn('admin', ADMIN_PASSWORD)
	})
})
