/**
 * Recorded response ids (modules/responses/ownership.ts) are kept for the vendor's retention only: the purge the
 * server runs every few hours deletes the older ones, and a continuation naming a purged id is refused as unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { sql } from 'drizzle-orm'
import { checkContinuation, checkItemReferences, purgeStoredResponses, STORED_RESPONSE_DAYS } from '../../../src/modules/responses/ownership'
import { storedItems, storedResponses } from '../../../src/db/schema'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
beforeAll(async () => {
	app = await startTestApp()
})
afterAll(() => app.close())

describe('stored response ids', () => {
	it(`should forget ids older than ${STORED_RESPONSE_DAYS} days and keep the rest`, async () => {
		const day = 86_400_000
		const orm = app.svc.db.orm
		await orm.insert(storedResponses).values([
			{ responseId: 'resp_old', accountId: 1, channelId: 1, createdAt: new Date(Date.now() - (STORED_RESPONSE_DAYS + 1) * day) },
			{ responseId: 'resp_recent', accountId: 1, channelId: 1, createdAt: new Date(Date.now() - (STORED_RESPONSE_DAYS - 1) * day) },
			{ responseId: 'resp_new', accountId: 1, channelId: 1 },
		])
		expect(await purgeStoredResponses(app.svc)).toBe(1)
		const left = await orm.select({ id: storedResponses.responseId }).from(storedResponses).orderBy(sql`1`)
		expect(left.map((r) => r.id)).toEqual(['resp_new', 'resp_recent'])
		// A second run (another instance) deletes nothing more.
		expect(await purgeStoredResponses(app.svc)).toBe(0)
		await expect(checkContinuation(app.svc, 1, { previous_response_id: 'resp_old' })).rejects.toMatchObject({ code: 'previous_response_not_found' })
		expect(await checkContinuation(app.svc, 1, { previous_response_id: 'resp_recent' })).toBe(1)
	})

	it('should forget the items of the responses it forgets, as long after', async () => {
		const day = 86_400_000
		const orm = app.svc.db.orm
		await orm.insert(storedItems).values([
			{ itemId: 'msg_old', accountId: 1, channelId: 1, createdAt: new Date(Date.now() - (STORED_RESPONSE_DAYS + 1) * day) },
			{ itemId: 'msg_recent', accountId: 1, channelId: 1, createdAt: new Date(Date.now() - (STORED_RESPONSE_DAYS - 1) * day) },
		])
		await purgeStoredResponses(app.svc)
		const left = await orm.select({ id: storedItems.itemId }).from(storedItems)
		expect(left.map((r) => r.id)).toEqual(['msg_recent'])
		const ref = (id: string) => ({ input: [{ type: 'item_reference', id }] })
		await expect(checkItemReferences(app.svc, 1, ref('msg_old'))).rejects.toMatchObject({ status: 404, message: "Item with id 'msg_old' not found." })
		expect(await checkItemReferences(app.svc, 1, ref('msg_recent'))).toBe(1)
		// Another account's item is as unknown as a forgotten one.
		await expect(checkItemReferences(app.svc, 2, ref('msg_recent'))).rejects.toMatchObject({ status: 404 })
	})
})
