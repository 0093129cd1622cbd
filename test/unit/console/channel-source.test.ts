import { describe, expect, it } from 'bun:test'
import { channelOrigin } from '../../../src/console/lib/channel-source'

describe('channelOrigin', () => {
	it('should name the quick-start variable of a channel made from one, not GATEWAY_CONFIG', () => {
		expect(channelOrigin({ source: 'env', type: 'openai' })?.label).toBe('from OPENAI_API_KEY')
		expect(channelOrigin({ source: 'env', type: 'gemini' })?.note).toContain('GEMINI_API_KEY')
		expect(channelOrigin({ source: 'config', type: 'openai' })?.label).toBe('from GATEWAY_CONFIG')
		expect(channelOrigin({ source: 'api', type: 'openai' })).toBeNull()
	})
})
