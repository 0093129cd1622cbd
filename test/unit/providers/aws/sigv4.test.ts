/**
 * SigV4 against AWS's published vectors: the signature test suite's get-vanilla, post-vanilla and
 * get-vanilla-query-order-key-case (credentials AKIDEXAMPLE, 20150830T123600Z, us-east-1, service `service`), and the
 * S3 GET Object example of the S3 docs (sig-v4-header-based-auth); then Bedrock's own rule: the path signed encoded twice.
 */
import { describe, expect, it } from 'bun:test'
import { canonicalPath, signV4 } from '../../../../src/providers/aws/sigv4'

const SUITE = { region: 'us-east-1', service: 'service', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }, now: new Date('2015-08-30T12:36:00Z') }
const SCOPE = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature='
const EMPTY_SHA = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

describe('signV4', () => {
	it('should sign get-vanilla as the AWS test suite does', () => {
		const h = signV4({ ...SUITE, method: 'GET', url: 'https://example.amazonaws.com/', headers: {} })
		expect(h['x-amz-date']).toBe('20150830T123600Z')
		expect(h.authorization).toBe(`${SCOPE}5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`)
	})

	it('should sign post-vanilla as the AWS test suite does', () => {
		const h = signV4({ ...SUITE, method: 'POST', url: 'https://example.amazonaws.com/', headers: {} })
		expect(h.authorization).toBe(`${SCOPE}5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`)
	})

	it('should sort the query as get-vanilla-query-order-key-case does', () => {
		const h = signV4({ ...SUITE, method: 'GET', url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1', headers: {} })
		expect(h.authorization).toBe(`${SCOPE}b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500`)
	})

	it("should sign the S3 docs' GET Object example (extra headers signed, sorted, lower-cased)", () => {
		const h = signV4({
			method: 'GET',
			url: 'https://examplebucket.s3.amazonaws.com/test.txt',
			headers: { Range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY_SHA },
			region: 'us-east-1',
			service: 's3',
			credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
			now: new Date('2013-05-24T00:00:00Z'),
			doubleEncodePath: false,
		})
		expect(h.authorization).toBe(
			'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
		)
	})

	it('should add and sign x-amz-security-token for temporary credentials', () => {
		const h = signV4({ ...SUITE, credentials: { ...SUITE.credentials, sessionToken: 'TOKEN' }, method: 'GET', url: 'https://example.amazonaws.com/', headers: {} })
		expect(h['x-amz-security-token']).toBe('TOKEN')
		expect(h.authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-security-token,')
		expect(h.authorization).not.toBe(`${SCOPE}5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`)
	})

	it("should encode a wire path's segments once more, as every service but S3 signs them", () => {
		const path = new URL(`https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-6-v1:0')}/invoke`).pathname
		expect(path).toBe('/model/us.anthropic.claude-sonnet-4-6-v1%3A0/invoke')
		expect(canonicalPath(path)).toBe('/model/us.anthropic.claude-sonnet-4-6-v1%253A0/invoke')
		expect(canonicalPath(path, false)).toBe(path)
	})
})
