import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { applyGatewayConfig } from '../../../src/config/config-apply'
import { withQuickStart } from '../../../src/config/quick-start'
import { parseGatewayConfig } from '../../../src/config/gateway-file'
import { createCipher } from '../../../src/lib/secrets'
import { createTestDb, type TestDb } from '../../helpers/db'
import { testCertificate } from '../../helpers/x509'

let t: TestDb

beforeAll(async () => {
	t = await createTestDb()
}, 120_000)
afterAll(() => t.drop())

const channel = (name: string, models = ['m']) => ({ name, type: 'openai', base_url: 'https://example.invalid/v1', api_key: 'env:UP_KEY', models })
const rows = async () =>
	(await t.db.sql.query<{ name: string; status: string; disabled_reason: string | null; models: string[] }>('SELECT name, status, disabled_reason, models FROM channels ORDER BY name')).map((r) => [r.name, r.status, r.disabled_reason, r.models])

describe('GATEWAY_CONFIG at start', () => {
	it('should upsert by name and disable, not delete, what the file no longer names', async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		const vars = { UP_KEY: 'k1' }
		await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [channel('a'), channel('b')], models: [{ name: 'm', input_per_mtok: 1 }] }), vars)
		await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [channel('a', ['m', 'n'])], models: [] }), vars)
		expect(await rows()).toEqual([
			['a', 'enabled', null, ['m', 'n']],
			['b', 'disabled', 'removed from config', ['m']],
		])
		const [m] = await t.db.sql.query<{ status: string }>(`SELECT status FROM models WHERE name = 'm'`)
		expect(m!.status).toBe('disabled')
		// Re-adding it enables it again.
		await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [channel('a'), channel('b')] }), vars)
		expect((await rows()).map((r) => r[1])).toEqual(['enabled', 'enabled'])
	})

	it('should say whether it changed anything, comparing JSON by value and the key decrypted', async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		const vars = { UP_KEY: 'k1' }
		// Several keys in settings and model_map: jsonb gives them back in its own order.
		const ch = { ...channel('w', ['m', 'n', 'zeta', 'a']), model_map: { zeta: 'z-1', a: 'a-1' }, settings: { timeouts: { idle_ms: 5000, first_byte_ms: 3000 }, headers: { 'x-long-header-name': '1', b: '2' } } }
		const cfg = parseGatewayConfig({ channels: [ch], models: [{ name: 'w-m', input_per_mtok: 1.5, output_per_mtok: 2, per_image: 0.04 }] })
		expect(await applyGatewayConfig(t.db, cipher, cfg, vars)).toBe(true)
		const [before] = await t.db.sql.query<{ updated_at: string }>(`SELECT updated_at FROM channels WHERE name = 'w'`)
		expect(await applyGatewayConfig(t.db, cipher, cfg, vars)).toBe(false)
		const [after] = await t.db.sql.query<{ updated_at: string }>(`SELECT updated_at FROM channels WHERE name = 'w'`)
		expect(after!.updated_at).toEqual(before!.updated_at) // not written again
		// A new key for the same channel is a change, though nothing else is.
		expect(await applyGatewayConfig(t.db, cipher, cfg, { UP_KEY: 'k2' })).toBe(true)
		expect(await applyGatewayConfig(t.db, cipher, cfg, { UP_KEY: 'k2' })).toBe(false)
		// So is a price, a channel disabled by the upstream (401) that the config enables again, and a removal.
		expect(await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [ch], models: [{ name: 'w-m', input_per_mtok: 1.6, output_per_mtok: 2, per_image: 0.04 }] }), { UP_KEY: 'k2' })).toBe(true)
		await t.db.sql.query(`UPDATE channels SET status = 'disabled', disabled_reason = 'the upstream rejected the channel''s credentials' WHERE name = 'w'`)
		expect(await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [ch], models: [{ name: 'w-m', input_per_mtok: 1.6, output_per_mtok: 2, per_image: 0.04 }] }), { UP_KEY: 'k2' })).toBe(true)
		expect(await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [], models: [] }), vars)).toBe(true)
		expect(await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [], models: [] }), vars)).toBe(false)
	})

	it('should refuse an env: key whose variable is not set, naming it', async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		await expect(applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [channel('c')] }), {}, 'gw.json')).rejects.toThrow(
			'gw.json: channel "c": field "api_key" names environment variable UP_KEY, which is not set',
		)
	})

	it('should refuse a bedrock or vertex key that cannot work at start, naming the channel and field but not the key', async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
		const cases = [
			[{ name: 'vx', type: 'vertex', base_url: 'https://aiplatform.googleapis.com', api_key: 'env:VX_KEY', models: ['m'] }, { VX_KEY: '{"type": "service_account", "client_email": "a@p.iam.gserviceaccount.com"' }, 'gw.json: channel "vx": field "api_key": the key starts like JSON but is not valid JSON'],
			[{ name: 'br', type: 'bedrock', base_url: 'https://bedrock-proxy.corp.example', api_key: 'env:BR_KEY', models: ['m'] }, { BR_KEY: `AKIAIOSFODNN7EXAMPLE:${secret}` }, 'gw.json: channel "br": field "settings.region": IAM keys are signed for a region'],
			[
				{ name: 'vx-user', type: 'vertex', base_url: 'https://aiplatform.googleapis.com', api_key: 'env:VX_USER', models: ['m'] },
				{ VX_USER: JSON.stringify({ type: 'authorized_user', client_id: 'c.apps.googleusercontent.com', client_secret: secret }) },
				'gw.json: channel "vx-user": field "api_key": an authorized_user key needs `refresh_token`',
			],
			[
				{ name: 'vx-wif', type: 'vertex', base_url: 'https://aiplatform.googleapis.com', api_key: 'env:VX_WIF', models: ['m'] },
				{ VX_WIF: JSON.stringify({ type: 'external_account', audience: '//iam.googleapis.com/x', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', credential_source: { executable: { command: `get ${secret}` } } }) },
				'gw.json: channel "vx-wif": field "api_key": `credential_source.executable` runs a command on the gateway\'s host, which the gateway does only when GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1',
			],
		] as const
		for (const [c, vars, said] of cases) {
			const err = await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [c] }), vars, 'gw.json').then(() => undefined, (e: Error) => e)
			expect(err?.message).toStartWith(said)
			expect(err?.message).not.toContain(secret)
		}
		expect((await rows()).map((r) => r[0])).not.toContain('vx')
	})

	it('should refuse an azure certificate out of date or a federated token file missing at start, naming the channel and field but not the key', async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		const old = await testCertificate({ cn: 'old app', notBefore: new Date(Date.now() - 2 * 86400_000), notAfter: new Date(Date.now() - 86400_000) })
		const ids = { tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47', client_id: '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44' }
		const azure = (name: string) => ({ name, type: 'azure', base_url: 'https://contoso.openai.azure.com', api_key: 'env:AZ_KEY', models: ['m'] })
		const cases = [
			[azure('az-old'), { AZ_KEY: JSON.stringify({ ...ids, certificate: old.certPem + old.keyPem }) }, 'gw.json: channel "az-old": field "api_key": the `certificate` expired on '],
			[azure('az-fed'), { AZ_KEY: JSON.stringify({ ...ids, federated_token_file: '/nonexistent/azure-identity-token' }) }, 'gw.json: channel "az-fed": field "api_key": `federated_token_file` /nonexistent/azure-identity-token cannot be read (ENOENT)'],
		] as const
		for (const [c, vars, said] of cases) {
			const err = await applyGatewayConfig(t.db, cipher, parseGatewayConfig({ channels: [c] }), vars, 'gw.json').then(() => undefined, (e: Error) => e)
			expect(err?.message).toStartWith(said)
			expect(err?.message).not.toContain(old.keyPem.split('\n')[2]!)
		}
	})

	it('should add a quick-start channel per vendor key only when no configured channel has that type', async () => {
		const none = await withQuickStart({ channels: [], models: [] }, { OPENAI_API_KEY: 'x', ANTHROPIC_API_KEY: 'y' })
		expect(none.channels.map((c) => [c.name, c.type, c.api_key])).toEqual([
			['openai-default', 'openai', 'env:OPENAI_API_KEY'],
			['anthropic-default', 'anthropic', 'env:ANTHROPIC_API_KEY'],
		])
		const configured = await withQuickStart(parseGatewayConfig({ channels: [channel('mine')] }), { OPENAI_API_KEY: 'x' })
		expect(configured.channels.map((c) => c.name)).toEqual(['mine'])
	})
})

describe('quick-start channels at start', () => {
	// The console labels a channel by its source: a quick-start one said "from GATEWAY_CONFIG" to an operator who never
	// wrote such a file, and its reason once dropped was "removed from config".
	const sourceOf = async (name: string) =>
		(await t.db.sql.query<{ source: string; status: string; disabled_reason: string | null }>('SELECT source, status, disabled_reason FROM channels WHERE name = $1', [name]))[0]

	it('should store them with source env, and disable them as such once no longer applied', async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		const vars = { OPENAI_API_KEY: 'k-oa', ANTHROPIC_API_KEY: 'k-an', UP_KEY: 'k1' }
		await applyGatewayConfig(t.db, cipher, await withQuickStart(parseGatewayConfig({}), vars), vars)
		expect(await sourceOf('openai-default')).toEqual({ source: 'env', status: 'enabled', disabled_reason: null })
		expect(await sourceOf('anthropic-default')).toEqual({ source: 'env', status: 'enabled', disabled_reason: null })
		// The next start has a file with an OpenAI channel of its own and no Anthropic key.
		const next = { OPENAI_API_KEY: 'k-oa', UP_KEY: 'k1' }
		await applyGatewayConfig(t.db, cipher, await withQuickStart(parseGatewayConfig({ channels: [channel('from-file')] }), next), next)
		expect(await sourceOf('from-file')).toEqual({ source: 'config', status: 'enabled', disabled_reason: null })
		const dropped = { source: 'env', status: 'disabled', disabled_reason: 'quick-start key no longer applied (its variable is unset, or GATEWAY_CONFIG has a channel of its type)' }
		expect(await sourceOf('openai-default')).toEqual(dropped)
		expect(await sourceOf('anthropic-default')).toEqual(dropped)
		// Applied again, a quick-start channel is enabled again, still from its variable.
		await applyGatewayConfig(t.db, cipher, await withQuickStart(parseGatewayConfig({}), vars), vars)
		expect(await sourceOf('anthropic-default')).toEqual({ source: 'env', status: 'enabled', disabled_reason: null })
	})

	it("should store a cloud vendor's default the same way, with its composed key, and disable it once its variables go", async () => {
		const cipher = await createCipher('test-secret-key-0123456789')
		const aws = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG', AWS_REGION: 'eu-west-1' }
		await applyGatewayConfig(t.db, cipher, await withQuickStart(parseGatewayConfig({}), aws), aws)
		expect(await sourceOf('bedrock-default')).toEqual({ source: 'env', status: 'enabled', disabled_reason: null })
		const [row] = await t.db.sql.query<{ base_url: string; api_key_enc: string }>(`SELECT base_url, api_key_enc FROM channels WHERE name = 'bedrock-default'`)
		expect(row!.base_url).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com')
		expect(await cipher.decrypt(row!.api_key_enc)).toBe('AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG')
		await applyGatewayConfig(t.db, cipher, await withQuickStart(parseGatewayConfig({}), {}), {})
		expect(await sourceOf('bedrock-default')).toEqual({ source: 'env', status: 'disabled', disabled_reason: 'quick-start key no longer applied (its variable is unset, or GATEWAY_CONFIG has a channel of its type)' })
	})
})
