/**
 * A mock OpenAI-compatible vendor that answers each upstream model name with one vendor's documented quirks, byte for
 * byte (see reasoning.ts, tools.ts, framing.ts). Built on the shared mock server (recording, faults, chunk delays).
 * @module
 */
import { json, sse } from '../shared/reply'
import { startMockServer } from '../shared/server'
import type { VendorMock } from '../shared/types'
import type { Scenario } from './chunks'
import { FRAMING_SCENARIOS } from './framing'
import { REASONING_SCENARIOS } from './reasoning'
import { TOOL_SCENARIOS } from './tools'

export const COMPAT_SCENARIOS: Record<string, (model: string) => Scenario> = { ...REASONING_SCENARIOS, ...TOOL_SCENARIOS, ...FRAMING_SCENARIOS }
export const COMPAT_MODELS = Object.keys(COMPAT_SCENARIOS)

const error = (status: number, message: string) => json({ error: { message, type: 'invalid_request_error', param: null, code: null } }, status)

/** Starts the mock; `chunkDelayMs` (default 2) keeps each scripted piece a separate network write. */
export function startCompatMock(opts: { apiKey: string; chunkDelayMs?: number }): VendorMock {
	return startMockServer(
		{
			basePath: '/v1',
			handle(req) {
				if (req.headers.get('authorization') !== `Bearer ${opts.apiKey}`) return error(401, 'Incorrect API key provided.')
				if (req.method !== 'POST' || req.path !== '/v1/chat/completions') return error(404, `no route ${req.path}`)
				const body = (req.body ?? {}) as { model?: string; stream?: boolean }
				const scenario = body.model ? COMPAT_SCENARIOS[body.model] : undefined
				if (!scenario) return error(404, `The model '${body.model}' does not exist`)
				const s = scenario(body.model!)
				return body.stream ? sse(s.stream, s.tail) : json(s.json)
			},
			statusBody: (status) => ({ error: { message: `Mock error ${status}`, type: 'server_error', param: null, code: null } }),
			streamError: () => ({ frame: `data: ${JSON.stringify({ error: { message: 'mock stream error', type: 'server_error' } })}\n\n`, status: 500 }),
		},
		{ apiKey: opts.apiKey, chunkDelayMs: opts.chunkDelayMs ?? 2 },
	)
}
