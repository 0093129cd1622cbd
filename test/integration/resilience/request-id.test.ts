/**
 * `x-request-id` (issue 4): taken from the client when given, generated otherwise, on every response (errors
 * included) and stored in the usage row. A client may send the same id twice, even at the same time (SDK retries,
 * a fixed id in a script): each request is still reserved and billed on its own, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { expectLedgerInvariant } from './invariant'
import { body, ENDPOINT, post, type Rig, startRig, usageOf } from './rig'

let rig: Rig
let key: string

beforeAll(async () => {
	rig = await startRig()
	key = (await rig.app.account(10)).key
}, 60_000)
afterAll(() => rig.close())

describe('x-request-id', () => {
	it('should generate one when the client sends none, and store it in the usage row', async () => {
		const a = await post(rig.app.url, 'chat', key, body('dual', 'hi', false))
		expect(a.status).toBe(200)
		const id = a.headers.get('x-request-id')
		expect(id).toMatch(/^req_[A-Za-z0-9]{24}$/)
		expect((await usageOf(rig.app, id!)).map((r) => r.status)).toEqual([200])
	})

	it('should keep the client\'s id on success and store it', async () => {
		const a = await post(rig.app.url, 'messages', key, body('dual', 'hi', true), { 'x-request-id': 'client-id-1' })
		expect(a.status).toBe(200)
		expect(a.headers.get('x-request-id')).toBe('client-id-1')
		expect((await usageOf(rig.app, 'client-id-1')).map((r) => r.status)).toEqual([200])
	})

	it('should replace an id that is not a safe token (header injection, huge values)', async () => {
		const a = await post(rig.app.url, 'chat', key, body('dual', 'hi', false), { 'x-request-id': 'x'.repeat(500) })
		expect(a.headers.get('x-request-id')).toMatch(/^req_/)
	})

	const errors: Array<[string, () => Promise<Response>, number]> = [
		['401 (bad key)', () => fetch(rig.app.url + ENDPOINT.chat, { method: 'POST', headers: { authorization: 'Bearer sk-nope', 'x-request-id': 'e-401' }, body: '{}' }), 401],
		['400 (invalid body)', () => fetch(rig.app.url + ENDPOINT.messages, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-request-id': 'e-400' }, body: '{"model":1}' }), 400],
		['404 (unknown model)', () => fetch(rig.app.url + ENDPOINT.chat, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'e-404' }, body: JSON.stringify(body('nope', 'hi', false)) }), 404],
		['404 (unknown route)', () => fetch(`${rig.app.url}/v1/nothing-here`, { headers: { 'x-request-id': 'e-404r' } }), 404],
		['502 (upstream down)', async () => {
			rig.primary.fault = { kind: 'status', status: 500 }
			try {
				return await fetch(rig.app.url + ENDPOINT.chat, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'e-502' }, body: JSON.stringify(body('solo', 'hi', false)) })
			} finally {
				rig.primary.fault = undefined
			}
		}, 502],
	]
	for (const [name, call, status] of errors)
		it(`should carry the id on an error response: ${name}`, async () => {
			const res = await call()
			expect(res.status).toBe(status)
			expect(res.headers.get('x-request-id')).toMatch(/^e-/)
		})

	it('should serve and bill two concurrent requests that share one client id, each once', async () => {
		const acct = await rig.app.account(1)
		const id = 'shared-client-id'
		rig.primary.fault = { kind: 'slow', firstByteMs: 150 } // both in flight at once
		try {
			const [a, b] = await Promise.all([
				post(rig.app.url, 'chat', acct.key, body('dual', 'first', false), { 'x-request-id': id }),
				post(rig.app.url, 'messages', acct.key, body('dual', 'second', true), { 'x-request-id': id }),
			])
			expect([a.status, b.status]).toEqual([200, 200])
		} finally {
			rig.primary.fault = undefined
		}
		const rows = await usageOf(rig.app, id)
		expect(rows.map((r) => r.status)).toEqual([200, 200])
		expect(rows.every((r) => r.cost > 0)).toBe(true)
		const t = await expectLedgerInvariant(rig.app.svc.db.sql, rig.app.svc.ledger)
		expect(t.inUse).toBe(0)
	})

})
