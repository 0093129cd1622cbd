/**
 * Plain `fetch` calls to the gateway for tests that must see the exact status, headers and bytes (errors, aborts,
 * validation), where an SDK would hide or reject them.
 * @module
 */
import type { Protocol } from './clients'
import type { Account, Matrix } from './harness'

export const ENDPOINT: Record<Protocol, string> = { chat: '/v1/chat/completions', messages: '/v1/messages' }

/** Auth headers as each protocol's SDK sends them. */
export const authHeaders = (proto: Protocol, key: string): Record<string, string> =>
	proto === 'chat' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key, 'anthropic-version': '2023-06-01' }

/** A minimal valid body for `model` asking `text`. */
export function simpleBody(proto: Protocol, model: string, text: string, stream: boolean): Record<string, unknown> {
	const base = { model, messages: [{ role: 'user', content: text }], ...(stream && { stream: true }) }
	return proto === 'chat' ? base : { ...base, max_tokens: 200 }
}

/** POSTs a JSON body (or raw text) to the protocol's endpoint with the account's key. */
export function postRaw(m: Matrix, proto: Protocol, acct: Pick<Account, 'key'> | undefined, body: unknown, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}) {
	return fetch(`${m.app.url}${ENDPOINT[proto]}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', ...(acct && authHeaders(proto, acct.key)), ...init.headers },
		body: typeof body === 'string' ? body : JSON.stringify(body),
		signal: init.signal,
	})
}

/** Checks an error body is in the protocol's shape and returns its type and code. */
export function errorOf(proto: Protocol, body: any): { type: string; code?: string | null; message: string } {
	if (proto === 'chat') {
		if (typeof body?.error?.message !== 'string' || typeof body.error.type !== 'string') throw new Error(`not an OpenAI error body: ${JSON.stringify(body)}`)
		return { type: body.error.type, code: body.error.code, message: body.error.message }
	}
	if (body?.type !== 'error' || typeof body.error?.type !== 'string' || typeof body.error.message !== 'string') throw new Error(`not an Anthropic error body: ${JSON.stringify(body)}`)
	return { type: body.error.type, message: body.error.message }
}
