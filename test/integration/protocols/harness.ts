/**
 * One gateway with three mock vendors behind it, for the protocol-matrix tests (issue 3): a model per vendor, the
 * official SDKs pointed at the gateway, and the checks on what a request was charged (usage rows and balance).
 * Each test file starts its own matrix in `beforeAll` and stops it in `afterAll`; each test opens its own account,
 * so charges never mix between tests.
 * @module
 */
import { expect } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type MockOptions, type RecordedRequest, type VendorMock } from '../../mocks'

/** Time allowed for `beforeAll` (booting a database and three servers takes seconds on a cold start). */
export const SETUP_MS = 60_000

export type Upstream = 'openai' | 'anthropic' | 'gemini'
export const UPSTREAMS: Upstream[] = ['openai', 'anthropic', 'gemini']

/** The model name a client asks the gateway for, per upstream vendor. */
export const MODEL: Record<Upstream, string> = { openai: 'gpt-m', anthropic: 'claude-m', gemini: 'gemini-m' }
/** What the gateway must send upstream instead (each channel maps the name with `model_map`). */
export const UPSTREAM_MODEL: Record<Upstream, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-4-6', gemini: 'gemini-2.5-flash' }

/**
 * A second model per vendor with `max_output_tokens: 16384` configured (the OpenAI one is a reasoning model, which
 * takes `max_completion_tokens`), for requests whose cap is above the model's maximum.
 */
export const CAPPED: Record<Upstream, string> = { openai: 'gpt-capped', anthropic: 'claude-capped', gemini: 'gemini-capped' }
export const CAPPED_UPSTREAM: Record<Upstream, string> = { openai: 'o3-mini', anthropic: 'claude-haiku-4-5', gemini: 'gemini-2.5-flash' }
export const CAPPED_MAX = 16384

/**
 * The model per vendor for thinking tests: OpenAI's `gpt-m` (gpt-4o-mini) does not reason and refuses a reasoning
 * effort, so the OpenAI one is a reasoning model; the others think as they are.
 */
export const THINKER: Record<Upstream, string> = { openai: 'gpt-think', anthropic: MODEL.anthropic, gemini: MODEL.gemini }
export const THINKER_UPSTREAM = 'o4-mini'

/** Served by two channels: OpenAI first (priority 0), Gemini second (priority 1), for failover tests. */
export const FAILOVER = 'fo-m'

/** USD per million tokens. Fractions of a micro-USD per token, so the single half-up rounding is exercised. */
export const PRICE: Record<string, { input: number; output: number; cacheRead?: number }> = {
	'gpt-m': { input: 0.15, output: 0.6 },
	'claude-m': { input: 3, output: 15, cacheRead: 0.3 },
	'gemini-m': { input: 0.3, output: 2.5 },
	'gpt-capped': { input: 0.15, output: 0.6 },
	'gpt-think': { input: 0.15, output: 0.6 },
	'claude-capped': { input: 3, output: 15, cacheRead: 0.3 },
	'gemini-capped': { input: 0.3, output: 2.5 },
	'fo-m': { input: 1, output: 2 },
	// Served over Anthropic's protocol by a channel some tests add (a model whose limits the gateway does not know).
	'claude-compat': { input: 3, output: 15 },
	// Served over OpenAI's Responses API by a channel some tests add (web search on a model that cannot search over chat).
	'gpt-web': { input: 0.15, output: 0.6 },
}

const UP_KEY: Record<Upstream, string> = { openai: 'up-openai', anthropic: 'up-anthropic', gemini: 'up-gemini' }

export type Matrix = {
	app: TestApp
	mocks: Record<Upstream, VendorMock>
	/** A fresh account with `balance` USD and a key on it. */
	account(balance?: number, token?: Parameters<TestApp['account']>[1]): Promise<Account>
	close(): Promise<void>
}

export type Account = { accountId: number; tokenId: number; key: string; balance: number; openai: OpenAI; anthropic: Anthropic }

export type MatrixOptions = {
	env?: Record<string, string>
	mock?: Partial<MockOptions>
	/** Extra model entries (prices) and per-model overrides such as `max_output_tokens`. */
	models?: GatewayConfig['models']
	/** Extra channels, appended after the three vendor channels. */
	channels?: (mocks: Record<Upstream, VendorMock>) => GatewayConfig['channels']
}

/** Starts the three mocks and a gateway with one channel per vendor. */
export async function startMatrix(opts: MatrixOptions = {}): Promise<Matrix> {
	const mocks: Record<Upstream, VendorMock> = {
		openai: await startOpenAIMock({ ...opts.mock, apiKey: UP_KEY.openai }),
		anthropic: await startAnthropicMock({ ...opts.mock, apiKey: UP_KEY.anthropic }),
		gemini: await startGeminiMock({ ...opts.mock, apiKey: UP_KEY.gemini }),
	}
	const channels: GatewayConfig['channels'] = UPSTREAMS.map((u) => ({
		name: `ch-${u}`,
		type: u,
		base_url: mocks[u].url,
		api_key: UP_KEY[u],
		models: [MODEL[u], CAPPED[u], ...(u === 'openai' ? [THINKER.openai] : [])],
		model_map: { [MODEL[u]]: UPSTREAM_MODEL[u], [CAPPED[u]]: CAPPED_UPSTREAM[u], ...(u === 'openai' && { [THINKER.openai]: THINKER_UPSTREAM }) },
	}))
	channels.push(
		{ name: 'fo-openai', type: 'openai', base_url: mocks.openai.url, api_key: UP_KEY.openai, models: [FAILOVER], model_map: { [FAILOVER]: 'gpt-4o' }, priority: 0 },
		{ name: 'fo-gemini', type: 'gemini', base_url: mocks.gemini.url, api_key: UP_KEY.gemini, models: [FAILOVER], model_map: { [FAILOVER]: 'gemini-2.5-pro' }, priority: 1 },
	)
	const models: GatewayConfig['models'] = Object.entries(PRICE).map(([name, p]) => ({
		name,
		input_per_mtok: p.input,
		output_per_mtok: p.output,
		...(p.cacheRead !== undefined && { cache_read_per_mtok: p.cacheRead }),
		...(name.endsWith('-capped') && { max_output_tokens: CAPPED_MAX }),
	}))
	for (const extra of opts.models ?? []) {
		const at = models.findIndex((m) => m.name === extra.name)
		if (at >= 0) models[at] = { ...models[at], ...extra }
		else models.push(extra)
	}
	const app = await startTestApp({ config: { channels: [...channels, ...(opts.channels?.(mocks) ?? [])], models }, env: opts.env })
	return {
		app,
		mocks,
		async account(balance = 10, token) {
			const a = await app.account(balance, token)
			return {
				accountId: a.accountId,
				tokenId: a.tokenId,
				key: a.key,
				balance,
				openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }),
				anthropic: new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 }),
			}
		},
		async close() {
			await app.close()
			await Promise.all(UPSTREAMS.map((u) => mocks[u].stop()))
		},
	}
}

/** A Gemini 3 model beside the matrix's (its mock signs text parts and refuses a function call of the turn without its signature). */
export const GEMINI_3 = 'gemini-3-m'

/** The matrix with one more channel serving GEMINI_3 as `gemini-3-pro-preview`, priced. */
export const startMatrixWithGemini3 = () =>
	startMatrix({
		channels: (mocks) => [
			{ name: 'ch-gemini-3', type: 'gemini', base_url: mocks.gemini.url, api_key: UP_KEY.gemini, models: [GEMINI_3], model_map: { [GEMINI_3]: 'gemini-3-pro-preview' } },
		],
		models: [{ name: GEMINI_3, input_per_mtok: 0.3, output_per_mtok: 2.5 }],
	})

/** Token counts a request should be billed for (`input` is the whole prompt, cache reads included). */
export type Expected = {
	model: string
	input: number
	output: number
	cached?: number
	reasoning?: number
	endpoint?: string
	stream?: boolean
	endReason?: string
	estimated?: boolean
}

/**
 * Micro-USD for the tokens at the model's price: one exact sum, one half-up rounding (computed here independently of
 * the gateway's billing code).
 */
export function costMicros(e: Pick<Expected, 'model' | 'input' | 'output' | 'cached'>): number {
	const p = PRICE[e.model]!
	const micro = (usdPerMtok: number) => BigInt(Math.round(usdPerMtok * 1e6))
	const cached = BigInt(e.cached ?? 0)
	const num = (BigInt(e.input) - cached) * micro(p.input) + cached * micro(p.cacheRead ?? p.input) + BigInt(e.output) * micro(p.output)
	return Number((num * 2n + 1_000_000n) / 2_000_000n)
}

export type UsageRow = {
	model: string
	upstream_model: string | null
	endpoint: string
	channel: string | null
	input_tokens: number
	output_tokens: number
	cached_tokens: number
	reasoning_tokens: number
	cost: number
	status: number
	estimated: boolean
	end_reason: string
	stream: boolean
	request_id: string
}

/** The account's usage rows, oldest first. */
export async function usageRows(m: Matrix, accountId: number): Promise<UsageRow[]> {
	const r = await m.app.admin(`/api/usage?account_id=${accountId}`)
	expect(r.status).toBe(200)
	return (r.body.data as UsageRow[]).slice().reverse()
}

/**
 * Asserts one usage row per expected request, in order, with these token counts and the exact cost, and that the
 * balance went down by the sum of those costs.
 */
export async function expectCharges(m: Matrix, acct: Account, expected: Expected[]): Promise<UsageRow[]> {
	const rows = await usageRows(m, acct.accountId)
	expect(rows.map((r) => ({ model: r.model, input: r.input_tokens, output: r.output_tokens }))).toEqual(
		expected.map((e) => ({ model: e.model, input: e.input, output: e.output })),
	)
	let total = 0
	rows.forEach((r, i) => {
		const e = expected[i]!
		const cost = costMicros(e)
		total += cost
		expect(Math.round(r.cost * 1e6)).toBe(cost)
		expect(r.cached_tokens).toBe(e.cached ?? 0)
		if (e.reasoning !== undefined) expect(r.reasoning_tokens).toBe(e.reasoning)
		if (e.endpoint !== undefined) expect(r.endpoint).toBe(e.endpoint)
		if (e.stream !== undefined) expect(r.stream).toBe(e.stream)
		expect(r.end_reason).toBe(e.endReason ?? 'ok')
		expect(r.estimated).toBe(e.estimated ?? false)
	})
	const balance = await m.app.balance(acct.accountId)
	expect(Math.round(balance * 1e6)).toBe(Math.round(acct.balance * 1e6) - total)
	return rows
}

/** The last request a mock received, with its JSON body. */
export function lastRequest(mock: Pick<VendorMock, 'requests'>): RecordedRequest & { body: Record<string, any> } {
	const r = mock.requests[mock.requests.length - 1]
	if (!r) throw new Error('the mock received no request')
	return r as ReturnType<typeof lastRequest>
}

/**
 * A matrix with one more model of OpenAI's catalog (GPT-5's price: $1.25 and $10 per million), served under its own
 * name by an OpenAI channel: what the outside clients' shape tests ask for besides the three vendors' models.
 */
export const startMatrixWithCatalogModel = (name: string) =>
	startMatrix({
		models: [{ name, input_per_mtok: 1.25, output_per_mtok: 10 }],
		channels: (mocks) => [{ name: `ch-${name.replaceAll('.', '-')}`, type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [name] }],
	})

/**
 * The matrix with OpenAI's catalog model `gpt` (GPT-5's price) on an OpenAI channel of its own (with `gptSettings`, e.g.
 * `responses_api`) and GEMINI_3 as `gemini-3-pro-preview` (Gemini 3 Pro's price, $2 and $12 per million; its mock signs
 * each turn's first call and refuses the call back without its signature): the coding agents' shape tests' models.
 */
export const startMatrixWithAgentModels = (gpt: string, gptSettings?: GatewayConfig['channels'][number]['settings']) =>
	startMatrix({
		models: [
			{ name: gpt, input_per_mtok: 1.25, output_per_mtok: 10 },
			{ name: GEMINI_3, input_per_mtok: 2, output_per_mtok: 12 },
		],
		channels: (mocks) => [
			{ name: `ch-${gpt.replaceAll('.', '-')}`, type: 'openai', base_url: mocks.openai.url, api_key: UP_KEY.openai, models: [gpt], ...(gptSettings && { settings: gptSettings }) },
			{ name: 'ch-gemini-3', type: 'gemini', base_url: mocks.gemini.url, api_key: UP_KEY.gemini, models: [GEMINI_3], model_map: { [GEMINI_3]: 'gemini-3-pro-preview' } },
		],
	})

/** `it` titles: `openai upstream, stream`. */
export const label = (up: Upstream, stream: boolean) => `${up} upstream, ${stream ? 'stream' : 'non-stream'}`

/** Every (upstream, stream) pair, for `describe.each`-like loops. */
export const PAIRS: Array<[Upstream, boolean]> = UPSTREAMS.flatMap((u) => [[u, false] as [Upstream, boolean], [u, true] as [Upstream, boolean]])
