/**
 * What the deployment tests (the compiled executable, the container image) do to a gateway started as an operator
 * starts it: set it up through the management API against the three mock vendors, then call it with the vendors'
 * own SDKs as the README promises.
 * @module
 */
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { expect } from 'bun:test'
import OpenAI from 'openai'

/** Base URLs and keys of the three mock vendors the gateway's channels point at. */
export type Upstreams = { openai: string; anthropic: string; gemini: string }

/** A management call: POST a JSON body, get the status and the parsed answer. */
export type Post = (path: string, body: unknown) => Promise<{ status: number; body: any }>

/** A management caller with the ADMIN_KEY bearer. */
export const adminPost = (url: string, adminKey: string): Post => async (path, body) => {
	const res = await fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
	return { status: res.status, body: await res.json() }
}

/** Channels for the three mock vendors (keys `up-openai`, `up-anthropic`, `up-gemini`), prices, an account and a key. */
export async function setUpGateway(post: Post, up: Upstreams, keyName = 'deployed'): Promise<string> {
	const channels = [
		{ name: 'oa', type: 'openai', base_url: up.openai, api_key: 'up-openai', models: ['gpt-4o-mini', 'text-embedding-3-small'] },
		{ name: 'an', type: 'anthropic', base_url: up.anthropic, api_key: 'up-anthropic', models: ['claude-haiku-4-5'] },
		{ name: 'ge', type: 'gemini', base_url: up.gemini, api_key: 'up-gemini', models: ['gemini-2.5-flash'] },
	]
	for (const c of channels) expect((await post('/api/channels', c)).status).toBe(201)
	for (const name of ['gpt-4o-mini', 'text-embedding-3-small', 'claude-haiku-4-5', 'gemini-2.5-flash']) expect((await post('/api/models', { name, input_per_mtok: 1, output_per_mtok: 2 })).status).toBe(201)
	const account = await post('/api/accounts', { name: 'ops', balance: 10 })
	expect(account.status).toBe(201)
	const token = await post('/api/tokens', { account_id: account.body.id, name: keyName })
	expect(token.status).toBe(201)
	return token.body.key
}

/** Every SDK call the README promises: OpenAI chat (whole, streamed) and embeddings, Anthropic messages, Gemini. */
export async function callWithSdks(url: string, key: string) {
	const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 })
	const anthropic = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 })
	const google = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } })
	const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'chat whole' }] })
	expect(chat.choices[0]!.message.content).toBe('Hello! You said: chat whole')
	let streamed = ''
	for await (const c of await openai.chat.completions.create({ model: 'claude-haiku-4-5', stream: true, messages: [{ role: 'user', content: 'chat streamed' }] }))
		streamed += c.choices[0]?.delta?.content ?? ''
	expect(streamed).toBe('Hello! You said: chat streamed')
	const embedding = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'embed me' })
	expect(embedding.data[0]!.embedding.length).toBe(1536)
	const message = await anthropic.messages.create({ model: 'gemini-2.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'messages whole' }] })
	expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello! You said: messages whole' })])
	expect(await anthropic.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'messages streamed' }] }).finalText()).toBe('Hello! You said: messages streamed')
	expect((await google.models.generateContent({ model: 'gemini-2.5-flash', contents: 'gemini native' })).text).toBe('Hello! You said: gemini native')
	expect((await google.models.generateContent({ model: 'gpt-4o-mini', contents: 'gemini converted' })).text).toBe('Hello! You said: gemini converted')
}
