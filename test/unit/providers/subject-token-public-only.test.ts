/**
 * Which keys read their subject token URL from a public address only (google/credentials.ts): one given through the
 * management API whose tokens go off Google's hosts, however deep the field (an impersonation's `source_credentials`, or
 * the impersonation itself); not when AMBIENT_ENDPOINTS lists where they go, nor for the operator's keys.
 * `localhost` is a name resolving to loopback, as a rebound name would; the vertex mock is the token endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { apiKeySource } from '../../../src/providers/channel-key'
import { googleCredentialOf } from '../../../src/providers/google/credentials'
import { startVertexMock, type VertexMock } from '../../mocks'
import { externalAccountKey, impersonatedKey } from '../../mocks/vertex/sts'

let v: VertexMock
let key: string
beforeAll(async () => {
	v = await startVertexMock({ project: 'proj-po', region: 'us-east5', expressKey: 'AQ.not-used' })
	const source = { url: `http://localhost:${new URL(v.url).port}/subject-token`, headers: { Metadata: 'true' }, format: { type: 'json', subject_token_field_name: 'access_token' } }
	// Each token goes to the mock (127.0.0.1): not Google's hosts.
	key = impersonatedKey(v.url, v.workload.serviceAccount, externalAccountKey(v.url, v.workload, source), [], 'proj-po')
})
afterAll(() => v?.stop())

let channel = 100
const fetched = (since: number) => v.tokenRequests.slice(since).filter((r) => r.path === '/subject-token').length

describe('the subject token URL of an impersonated external_account key', () => {
	it('should be refused at a loopback address for a key given through the management API, naming the field that goes off Google', async () => {
		const since = v.tokenRequests.length
		const err = await googleCredentialOf(key, apiKeySource([]))!.token(++channel, key).catch((e) => e)
		expect(err).toMatchObject({ code: 'upstream_auth' })
		expect(err.detail).toContain('private, loopback or link-local')
		expect(err.detail).toContain('`source_credentials.token_url`')
		expect(v.tokenRequests.length).toBe(since)
	})

	it('should be read when AMBIENT_ENDPOINTS lists where its tokens go, and for the operator’s key', async () => {
		for (const from of [apiKeySource(['127.0.0.1']), undefined]) {
			const since = v.tokenRequests.length
			expect(await googleCredentialOf(key, from)!.token(++channel, key)).toMatch(/^ya29\.imp-\d+$/)
			expect(fetched(since)).toBe(1)
		}
	})
})
