/**
 * Recorded response ids (modules/responses/ownership.ts) are kept for the vendor's retention only: the purge the
 * server runs every few hours deletes the older ones, and a continuation naming a purged id is refused as unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { sql } from 'drizzle-orm'
import { checkContinuation, purgeStoredResponses, STORED_RESPONSE_DAYS } from '../../../src/modules/responses/ownership'
import { storedResponses } from '../../../src/db/schema'
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
})
