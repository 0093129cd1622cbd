/**
 * One call through each client SDK (retries off) that is expected to fail: what its error says, the status and the
 * shape's own error type (OpenAI `type`, Anthropic `error.type`, Gemini `status`).
 */
import Anthropic from '@anthropic-ai/sdk'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import type { Account } from './harness'

/** The client SDKs, in the order tests run them. */
export const CLIENT_NAMES = ['openai', 'anthropic', 'gemini'] as const
export type ClientName = (typeof CLIENT_NAMES)[number]

export type Seen = { status: number; type: string }

/** One call through each client SDK; what its error says (status, and the shape's own error type/status). */
export const errorClients = (url: string): Record<ClientName, (acct: Account, model: string, stream: boolean) => Promise<Seen>> => ({
	async openai(acct, model, stream) {
		const e = await (async () => {
			if (!stream) return acct.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'busy?' }] })
			for await (const _ of await acct.openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'busy?' }] }));
		})().catch((x: unknown) => x)
		if (!(e instanceof OpenAI.APIError)) throw new Error(`expected an APIError, got ${String(e)}`)
		return { status: e.status as number, type: e.type ?? '' }
	},
	async anthropic(acct, model, stream) {
		const params = { model, max_tokens: 50, messages: [{ role: 'user' as const, content: 'busy?' }] }
		const e = await (stream ? acct.anthropic.messages.stream(params).finalMessage() : acct.anthropic.messages.create(params)).catch((x: unknown) => x)
		if (!(e instanceof Anthropic.APIError)) throw new Error(`expected an APIError, got ${String(e)}`)
		return { status: e.status as number, type: (e.error as { error?: { type?: string } }).error?.type ?? '' }
	},
	async gemini(acct, model, stream) {
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: url, apiVersion: 'v1beta', retryOptions: { attempts: 1 } } })
		const e = await (async () => {
			if (!stream) return ai.models.generateContent({ model, contents: 'busy?' })
			for await (const _ of await ai.models.generateContentStream({ model, contents: 'busy?' }));
		})().catch((x: unknown) => x)
		if (!(e instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(e)}`)
		return { status: e.status, type: (JSON.parse(e.message) as { error: { status: string } }).error.status }
	},
})
