/**
 * Which hosts count as the cloud's own for the host's identity (ambient-endpoints.ts), and which subject token URLs
 * read something of the host's: the spellings an address can hide behind, and the names that only look official.
 */
import { describe, expect, it } from 'bun:test'
import { identityEndpointProblem, isHostAddress } from '../../../src/providers/ambient-endpoints'

describe('identityEndpointProblem', () => {
	it("should refuse hosts that only look like the cloud's own, a user in the URL, and plain http", () => {
		for (const url of [
			'https://bedrock-runtime.us-east-1.amazonaws.com.evil.example',
			'https://evil.example#bedrock-runtime.us-east-1.amazonaws.com',
			'https://x@bedrock-runtime.us-east-1.amazonaws.com',
			'https://abc.execute-api.us-east-1.amazonaws.com',
			'https://bucket.s3.amazonaws.com',
			'http://bedrock-runtime.us-east-1.amazonaws.com',
		])
			expect([url, identityEndpointProblem(url, 'aws', [])]).toEqual([url, expect.stringContaining('AMBIENT_ENDPOINTS')])
		expect(identityEndpointProblem('https://aiplatform.googleapis.com', 'aws', [])).toContain('amazonaws.com')
		expect(identityEndpointProblem('https://res.openai.azure.com', 'google', [])).toContain('googleapis.com')
	})

	it('should take a *.suffix entry for hosts under it, not for the suffix itself', () => {
		expect(identityEndpointProblem('http://a.vpc.example:8080/v1', 'azure', ['*.vpc.example'])).toBeUndefined()
		expect(identityEndpointProblem('https://vpc.example', 'azure', ['*.vpc.example'])).toContain('AMBIENT_ENDPOINTS')
		expect(identityEndpointProblem('http://[::1]:9000', 'google', ['::1'])).toBeUndefined()
	})
})

describe('isHostAddress', () => {
	it('should see the metadata and loopback addresses however they are spelt, and a public address as none', async () => {
		for (const url of ['http://169.254.169.254/token', 'http://2852039166/token', 'http://[::ffff:169.254.169.254]/token', 'http://localhost:8080/token', 'http://10.1.2.3/t', 'http://[fd00::1]/t'])
			expect([url, await isHostAddress(url)]).toEqual([url, true])
		expect(await isHostAddress('https://203.0.113.7/oidc')).toBe(false)
	})
})
