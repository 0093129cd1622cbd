import { describe, expect, it } from 'bun:test'
import { ModelEntry } from '../../../src/config/gateway-file'
import { nearestKey, schemaKeys } from '../../../src/config/nearest-key'

describe('nearestKey', () => {
	const prices = schemaKeys(ModelEntry)
	it('should name the known key a slip or a vendor word stands for', () => {
		const cases: Array<[string, string]> = [
			// OpenAI's "Cached input": plain edit distance would say batch_input_per_mtok (4 edits) over cache_read_per_mtok (6).
			['cached_input_per_mtok', 'cache_read_per_mtok'],
			['cache_hit_per_mtok', 'cache_read_per_mtok'],
			['cache_creation_per_mtok', 'cache_write_per_mtok'],
			['prompt_per_mtok', 'input_per_mtok'],
			['completion_per_mtok', 'output_per_mtok'],
			['ouput_per_mtok', 'output_per_mtok'],
			['cacheReadPerMtok', 'cache_read_per_mtok'],
			['per_reqest', 'per_request'],
			['per_imgae', 'per_image'],
			['enabeld', 'enabled'],
		]
		expect(cases.map(([k]) => [k, nearestKey(k, prices)])).toEqual(cases)
	})
	it('should name none when nothing is near, or when the key is known', () => {
		for (const k of ['cost', 'reasoning_per_mtok', 'input_per_mtok']) expect(nearestKey(k, prices)).toBeUndefined()
	})
	it("should read a schema's keys: properties, an intersection's members, the plain names of a pattern", () => {
		expect(prices).toContain('cache_read_per_mtok')
		expect(prices).toContain('per_web_search')
		expect(prices).toContain('batch_output_per_mtok')
		// per_image_<size> is a pattern, not a name.
		expect(prices.filter((k) => !/^[a-z0-9_]+$/.test(k))).toEqual([])
	})
})
