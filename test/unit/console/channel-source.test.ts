import { describe, expect, it } from 'bun:test'
import { channelOrigin } from '../../../src/console/lib/channel-source'

describe('channelOrigin', () => {
	it('should name the quick-start variable of a channel made from one, not GATEWAY_CONFIG', () => {
		expect(channelOrigin({ source: 'env', type: 'openai' })?.label).toBe('from OPENAI_API_KEY')
		expect(channelOrigin({ source: 'env', type: 'gemini' })?.note).toContain('GEMINI_API_KEY')
		expect(channelOrigin({ source: 'config', type: 'openai' })?.label).toBe('from GATEWAY_CONFIG')
		expect(channelOrigin({ source: 'api', type: 'openai' })).toBeNull()
	})

	it("should name the cloud vendors' variables, both kinds of key where there are two", () => {
		expect(channelOrigin({ source: 'env', type: 'bedrock' })?.label).toBe('from AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID')
		expect(channelOrigin({ source: 'env', type: 'bedrock' })?.note).toContain('AWS_REGION')
		expect(channelOrigin({ source: 'env', type: 'azure' })?.label).toBe('from AZURE_OPENAI_API_KEY or AZURE_CLIENT_ID')
		expect(channelOrigin({ source: 'env', type: 'azure' })?.note).toContain('AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_API_KEY (or AZURE_TENANT_ID and AZURE_CLIENT_ID with AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH or AZURE_FEDERATED_TOKEN_FILE)')
		expect(channelOrigin({ source: 'env', type: 'vertex' })?.label).toBe('from GOOGLE_APPLICATION_CREDENTIALS')
	})
})
