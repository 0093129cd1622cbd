/**
 * One gateway with the three mock vendors for the native-route tests (Responses, Gemini methods, model lists, token
 * counting): a chat model per vendor (and OpenAI's o4-mini, which reasons), an alias renamed by `model_map`, and an
 * embedding model on OpenAI and Gemini.
 * @module
 */
import OpenAI, { type APIError } from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

export const SETUP_MS = 60_000

export type Native = { app: TestApp; openai: VendorMock; anthropic: VendorMock; gemini: VendorMock; close(): Promise<void> }

/** USD per million tokens. */
export const PRICES: Record<string, [number, number]> = {
	'gpt-4o-mini': [1, 2],
	// A reasoning model: gpt-4o-mini refuses a reasoning effort, as OpenAI does.
	'o4-mini': [1, 2],
	'gpt-alias': [1, 2],
	'openai/gpt-4o-mini': [1, 2],
	'compat-chat': [1, 2],
	mixed: [1, 2],
	'claude-sonnet-5': [3, 15],
	'gemini-2.5-flash': [1, 4],
	'text-embedding-3-small': [0.5, 0],
	'gemini-embedding-001': [0.25, 0],
}

export async function startNative(): Promise<Native> {
	const openai = await startOpenAIMock({ apiKey: 'up-oa' })
	const anthropic = await startAnthropicMock({ apiKey: 'up-an' })
	const gemini = await startGeminiMock({ apiKey: 'up-ge' })
	const app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: openai.url, api_key: 'up-oa', models: ['gpt-4o-mini', 'o4-mini', 'text-embedding-3-small', 'gpt-alias', 'openai/gpt-4o-mini'], model_map: { 'gpt-alias': 'gpt-4o-mini', 'openai/gpt-4o-mini': 'gpt-4o-mini' } },
				// An OpenAI-compatible vendor without the Responses API: Responses clients are converted to chat completions.
				{ name: 'oa-chat-only', type: 'openai', base_url: openai.url, api_key: 'up-oa', models: ['compat-chat'], model_map: { 'compat-chat': 'gpt-4o-mini' }, settings: { responses_api: false } },
				{ name: 'an', type: 'anthropic', base_url: anthropic.url, api_key: 'up-an', models: ['claude-sonnet-5'] },
				// One model on an Anthropic channel first and an OpenAI channel second.
				{ name: 'an-mixed', type: 'anthropic', base_url: anthropic.url, api_key: 'up-an', models: ['mixed'], model_map: { mixed: 'claude-sonnet-5' }, priority: 0 },
				{ name: 'oa-mixed', type: 'openai', base_url: openai.url, api_key: 'up-oa', models: ['mixed'], model_map: { mixed: 'gpt-4o-mini' }, priority: 1 },
				{ name: 'ge', type: 'gemini', base_url: gemini.url, api_key: 'up-ge', models: ['gemini-2.5-flash', 'gemini-embedding-001'] },
			],
			models: Object.entries(PRICES).map(([name, [i, o]]) => ({ name, input_per_mtok: i, output_per_mtok: o })),
		},
	})
	return {
		app,
		openai,
		anthropic,
		gemini,
		async close() {
			await app.close()
			await Promise.all([openai.stop(), anthropic.stop(), gemini.stop()])
		},
	}
}

export type UsageRow = { model: string; upstream_model: string | null; endpoint: string; input_tokens: number; output_tokens: number; reasoning_tokens: number; cost: number; status: number; end_reason: string; estimated: boolean; stream: boolean }

/** The account's usage rows, oldest first. */
export async function usageRows(app: TestApp, accountId: number): Promise<UsageRow[]> {
	const r = await app.admin(`/api/usage?account_id=${accountId}&limit=100`)
	return [...(r.body.data as UsageRow[])].reverse()
}

/**
 * The account's usage rows once there are `count` of them. A stream is settled in its generator's `finally`, which runs
 * after the client stopped reading (an SDK stops at an error event), so the row can land just after the client returns.
 */
export async function settledRows(app: TestApp, accountId: number, count = 1, timeoutMs = 3_000): Promise<UsageRow[]> {
	const until = Date.now() + timeoutMs
	for (;;) {
		const rows = await usageRows(app, accountId)
		if (rows.length >= count || Date.now() > until) return rows
		await Bun.sleep(20)
	}
}

/** The last request a mock received. */
export function lastRequest(mock: VendorMock): { path: string; query: Record<string, string>; headers: Record<string, string>; body: any } {
	const r = mock.requests[mock.requests.length - 1]
	if (!r) throw new Error('the mock received no request')
	return r as { path: string; query: Record<string, string>; headers: Record<string, string>; body: any }
}

/** A new account with `balance` USD, its key, and the official `openai` SDK on the gateway with that key. */
export async function openaiAccount(app: TestApp, balance = 1) {
	const a = await app.account(balance)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }) }
}

/** The SDK's error a call was refused with, or undefined when it succeeded (for asserting on status, code and param). */
export const refused = (p: Promise<unknown>): Promise<APIError | undefined> =>
	p.then(
		() => undefined,
		(e: unknown) => e as APIError,
	)
