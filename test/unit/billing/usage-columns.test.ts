/** The usage rows' column literals, as sb_lease_flush reads them (PostgreSQL array input syntax). */
import { describe, expect, it } from 'bun:test'
import { UsageColumns } from '../../../src/billing/usage-columns'
import type { UsageRecord } from '../../../src/billing/usage-record'

const row = (over: Partial<UsageRecord> = {}): UsageRecord => ({
	requestId: 'req_1', accountId: 1, tokenId: 2, model: 'gpt-4o-mini', endpoint: '/v1/chat/completions', inputTokens: 3, outputTokens: 4,
	cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, status: 200, latencyMs: 5, estimated: false, endReason: 'ok', stream: true, ...over,
})

describe('UsageColumns', () => {
	it('should quote text, escape only " and \\, and write NULL for missing values', () => {
		const c = new UsageColumns()
		c.add(row({ model: 'a"b\\c"', channel: 'plain', upstreamModel: undefined }), 7, 1700000000000)
		c.add(row({ requestId: 'req_2', model: '\\\\', tokenId: null, channel: 'x,y {z}' }), 0, 1700000000001)
		const [requestId, , tokenId, model, upstreamModel, , , channel, , , , , , cost, , , estimated, , stream, at] = c.literals()
		expect(requestId).toBe('{"req_1","req_2"}')
		expect(model).toBe('{"a\\"b\\\\c\\"","\\\\\\\\"}')
		expect(tokenId).toBe('{2,NULL}')
		expect(upstreamModel).toBe('{NULL,NULL}')
		expect(channel).toBe('{"plain","x,y {z}"}')
		expect([cost, estimated, stream, at]).toEqual(['{7,0}', '{f,f}', '{t,t}', '{1700000000000,1700000000001}'])
		expect(c.size).toBe(2)
	})

	it('should give an empty array for every column before any row, and mix NULL into a text column as its own element', () => {
		const c = new UsageColumns()
		expect(c.literals()).toEqual(Array.from({ length: 20 }, () => '{}'))
		c.add(row({ channel: 'a' }), 1, 1)
		c.add(row({ channel: undefined }), 2, 2)
		c.add(row({ channel: '' }), 3, 3)
		expect(c.literals()[7]).toBe('{"a",NULL,""}')
		expect(c.literals()[0]).toBe('{"req_1","req_1","req_1"}')
	})
})
