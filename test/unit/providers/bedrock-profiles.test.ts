/**
 * Learning an application inference profile's model from Bedrock's control plane (providers/bedrock-profiles.ts),
 * against the Bedrock mock's GetInferenceProfile: where it is asked, what its answer names, the channel's credentials
 * (IAM keys, a role's), the bounded wait, and a failure kept a minute and logged once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setSystemTime } from 'bun:test'
import type { Logger } from '../../../src/lib/log'
import { foundationModelOf } from '../../../src/providers/base-models'
import { controlPlaneUrl, foundationModelIn, LOOKUP_WAIT_MS, profilesLearnt } from '../../../src/providers/bedrock-profiles'
import type { Channel } from '../../../src/routing/catalog'
import { type BedrockMock, startBedrockMock } from '../../mocks'
import { type AwsMetadataMock, startAwsMetadataMock } from '../../mocks/bedrock/metadata'

const REGION = 'us-east-1'
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const arn = (id: string) => `arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/${id}`
const SONNET = 'anthropic.claude-sonnet-4-5-20250929-v1:0'

let br: BedrockMock
let aws: AwsMetadataMock
const savedImds = process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT
/** Copied from the US cross-region profile; `missing1` is none Bedrock knows. */
const profiles = Object.fromEntries(['iam1', 'role1', 'slow1', 'denied1', 'proxy1'].map((id) => [arn(id), `us.${SONNET}`]))
beforeAll(async () => {
	aws = startAwsMetadataMock('container-token')
	br = await startBedrockMock({ apiKey: 'ABSK-unit', iam: IAM, region: REGION, models: Object.keys(profiles), profiles, roleKeys: aws })
	process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = aws.url
})
afterAll(async () => {
	setSystemTime()
	if (savedImds === undefined) delete process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT
	else process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = savedImds
	await br.stop()
	await aws.stop()
})
afterEach(() => {
	br.lookupDenied = false
	br.lookupDelayMs = 0
})

let nextId = 100
const channel = (profile: string, over: Partial<Channel> = {}): Channel => ({
	id: nextId++,
	name: `br-${profile.slice(-6)}`,
	type: 'bedrock',
	baseUrl: br.url,
	apiKey: `${IAM.accessKeyId}:${IAM.secretAccessKey}`,
	models: ['p'],
	modelMap: { p: profile },
	priority: 0,
	weight: 1,
	settings: { region: REGION, control_plane_url: br.url },
	...over,
})

/** A logger that keeps what it is told. */
function recorder() {
	const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = []
	const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields })
	const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
	return { log, lines }
}

const lookupsOf = (profile: string) => br.requests.filter((r) => r.path === `/inference-profiles/${encodeURIComponent(profile)}`)

describe('controlPlaneUrl', () => {
	it("should be the host beside AWS's runtime endpoint (FIPS and China's too), the setting when given, and none beside a proxy", () => {
		const ch = (baseUrl: string, settings: Record<string, unknown> = {}) => ({ baseUrl, settings })
		expect(controlPlaneUrl(ch('https://bedrock-runtime.eu-central-1.amazonaws.com'))).toBe('https://bedrock.eu-central-1.amazonaws.com')
		expect(controlPlaneUrl(ch('https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com'))).toBe('https://bedrock-fips.us-gov-west-1.amazonaws.com')
		expect(controlPlaneUrl(ch('https://bedrock-runtime.cn-north-1.amazonaws.com.cn'))).toBe('https://bedrock.cn-north-1.amazonaws.com.cn')
		expect(controlPlaneUrl(ch('https://vpce-0a1b.bedrock-runtime.us-east-1.vpce.amazonaws.com'))).toBeUndefined()
		expect(controlPlaneUrl(ch('https://proxy.internal/bedrock'))).toBeUndefined()
		const vpce = 'https://vpce-9z.bedrock.us-east-1.vpce.amazonaws.com'
		expect(controlPlaneUrl(ch('https://proxy.internal', { control_plane_url: vpce }))).toBe(vpce)
	})
})

describe('foundationModelIn', () => {
	it("should read the model part of GetInferenceProfile's first modelArn, and nothing from an answer without one", () => {
		const models = ['us-east-1', 'us-east-2'].map((r) => ({ modelArn: `arn:aws:bedrock:${r}::foundation-model/${SONNET}` }))
		expect(foundationModelIn(JSON.stringify({ inferenceProfileArn: arn('x'), models, status: 'ACTIVE', type: 'APPLICATION' }))).toBe(SONNET)
		expect(foundationModelIn(JSON.stringify({ models: [{ modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0' }] }))).toBe('amazon.nova-pro-v1:0')
		expect(foundationModelIn(JSON.stringify({ models: [] }))).toBeUndefined()
		expect(foundationModelIn(JSON.stringify({ models: [{ modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/' }] }))).toBeUndefined()
		expect(foundationModelIn('<html>')).toBeUndefined()
	})
})

describe('profilesLearnt', () => {
	it('should make nothing for a model that is not an unlisted application inference profile on a bedrock channel', () => {
		const { log } = recorder()
		expect(profilesLearnt([channel(`us.${SONNET}`)], 'p', log)).toBeUndefined()
		expect(profilesLearnt([channel(arn('iam1'), { settings: { base_models: { [arn('iam1')]: SONNET }, control_plane_url: br.url } })], 'p', log)).toBeUndefined()
		expect(profilesLearnt([channel(arn('iam1'), { type: 'anthropic' })], 'p', log)).toBeUndefined()
		expect(lookupsOf(arn('iam1'))).toHaveLength(0)
	})

	it('should ask with SigV4-signed IAM keys, and once learnt make nothing more', async () => {
		const { log, lines } = recorder()
		const ch = channel(arn('iam1'))
		expect(foundationModelOf(ch, arn('iam1'))).toBe(arn('iam1'))
		await profilesLearnt([ch], 'p', log)
		expect(foundationModelOf(ch, arn('iam1'))).toBe(SONNET)
		const [call] = lookupsOf(arn('iam1'))
		expect(call!.headers.authorization).toStartWith(`AWS4-HMAC-SHA256 Credential=${IAM.accessKeyId}/`)
		expect(profilesLearnt([ch], 'p', log)).toBeUndefined()
		expect(lookupsOf(arn('iam1'))).toHaveLength(1)
		expect(lines).toEqual([{ level: 'info', msg: 'bedrock application inference profile learnt', fields: { channel: ch.name, profile: arn('iam1'), base_model: SONNET } }])
		// Another key on the channel (edited) starts over: what was learnt with the old one is not assumed.
		expect(foundationModelOf({ ...ch, apiKey: 'ABSK-unit' }, arn('iam1'))).toBe(arn('iam1'))
	})

	it("should sign with the role's temporary keys on a channel keyed ambient", async () => {
		const { log } = recorder()
		const ch = channel(arn('role1'), { apiKey: 'ambient' })
		await profilesLearnt([ch], 'p', log)
		expect(foundationModelOf(ch, arn('role1'))).toBe(SONNET)
		const [call] = lookupsOf(arn('role1'))
		expect(call!.headers.authorization).toStartWith('AWS4-HMAC-SHA256 Credential=ASIAMOCKROLE')
		expect(call!.headers['x-amz-security-token']).toStartWith('IQoJb3JpZ2luX2VjEMOCK')
	})

	it('should wait at most LOOKUP_WAIT_MS, the lookup going on for the requests after', async () => {
		const { log } = recorder()
		br.lookupDelayMs = LOOKUP_WAIT_MS + 400
		const ch = channel(arn('slow1'))
		const started = performance.now()
		await profilesLearnt([ch], 'p', log)
		const waited = performance.now() - started
		expect(waited).toBeGreaterThanOrEqual(LOOKUP_WAIT_MS - 50)
		expect(waited).toBeLessThan(LOOKUP_WAIT_MS + 300)
		expect(foundationModelOf(ch, arn('slow1'))).toBe(arn('slow1'))
		// The next request meets the same call, not another.
		await profilesLearnt([ch], 'p', log)
		expect(foundationModelOf(ch, arn('slow1'))).toBe(SONNET)
		expect(lookupsOf(arn('slow1'))).toHaveLength(1)
	}, 15_000)

	it('should keep a refusal a minute, and log it once while it repeats', async () => {
		const { log, lines } = recorder()
		br.lookupDenied = true
		const ch = channel(arn('denied1'))
		try {
			await profilesLearnt([ch], 'p', log)
			expect(foundationModelOf(ch, arn('denied1'))).toBe(arn('denied1'))
			expect(profilesLearnt([ch], 'p', log)).toBeUndefined()
			setSystemTime(new Date(Date.now() + 61_000))
			await profilesLearnt([ch], 'p', log)
			expect(lookupsOf(arn('denied1'))).toHaveLength(2)
			expect(lines).toHaveLength(1)
			expect(lines[0]!.level).toBe('warn')
			expect(lines[0]!.fields).toMatchObject({ channel: ch.name, profile: arn('denied1'), retry_in_ms: 60_000 })
			const said = 'HTTP 403 AccessDeniedException: User: arn:aws:iam::111122223333:user/gateway is not authorized to perform: bedrock:GetInferenceProfile'
			expect(String(lines[0]!.fields!.error)).toContain(said)
			// Another failure is said: the profile Bedrock does not know.
			br.lookupDenied = false
			const missing = channel(arn('missing1'))
			await profilesLearnt([missing], 'p', log)
			expect(lines.at(-1)!.fields!.error).toContain('HTTP 404 ResourceNotFoundException')
		} finally {
			setSystemTime()
		}
	})

	it('should not ask without a control plane, and say so once', async () => {
		const { log, lines } = recorder()
		const ch = channel(arn('proxy1'), { settings: { region: REGION } })
		expect(profilesLearnt([ch], 'p', log)).toBeUndefined()
		expect(profilesLearnt([ch], 'p', log)).toBeUndefined()
		expect(lookupsOf(arn('proxy1'))).toHaveLength(0)
		expect(lines.map((l) => [l.level, l.msg])).toEqual([
			['info', 'bedrock application inference profile: its model is not asked of Bedrock (no control plane: set settings.control_plane_url or base_models); it goes over Converse'],
		])
	})
})
