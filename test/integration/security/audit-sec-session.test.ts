/**
 * The console session as a clumsy or hostile client presents it: a cookie whose value is not valid percent-encoding
 * (a forged one, or one another app on the same host wrote) is no session, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type SecApp, startSecApp } from './setup'

let app: SecApp
beforeAll(async () => {
	app = await startSecApp()
}, 60_000)
afterAll(() => app?.close())

describe('a malformed session cookie', () => {
	for (const cookie of ['sb_session=%zz', 'sb_session=%E0%A4%A', 'other=1; sb_session=abc%']) {
		it(`should read as signed out on GET /api/session (${cookie})`, async () => {
			const r = await fetch(`${app.url}/api/session`, { headers: { cookie } })
			expect(r.status).toBe(200)
			expect(((await r.json()) as { user: unknown }).user).toBeNull()
		})

		it(`should be refused with 401 on a management route (${cookie})`, async () => {
			const r = await fetch(`${app.url}/api/tokens`, { headers: { cookie } })
			expect(r.status).toBe(401)
		})
	}

	it('should still let the ADMIN_KEY bearer through beside it', async () => {
		const r = await fetch(`${app.url}/api/tokens`, { headers: { cookie: 'sb_session=%zz', authorization: 'Bearer sec-admin-key-a1b2c3d4e5f6' } })
		expect(r.status).toBe(200)
	})
})
