/** Shared pieces of the surface tests: usage rows of an account, JSON calls with a key, a slow ledger. */
import type { GatewayConfig } from '../../../src/config/gateway-file'
import type { TestApp } from '../../helpers/app'

export type UsageRow = { model: string; endpoint: string; cost: number; input_tokens: number; output_tokens: number; status: number; end_reason: string; estimated: boolean }

/** The account's usage rows, oldest first. */
export async function usageOf(app: TestApp, accountId: number): Promise<UsageRow[]> {
	const r = await app.admin(`/api/usage?account_id=${accountId}&limit=100`)
	return [...(r.body.data as UsageRow[])].reverse()
}

/** A call with the key, JSON in and out (the raw Response kept for headers). */
export async function call(app: TestApp, key: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
	const res = await fetch(app.url + path, {
		method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
		headers: { authorization: `Bearer ${key}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	})
	const text = await res.text()
	let body: any = text
	try {
		body = JSON.parse(text)
	} catch {
		// not JSON
	}
	return { status: res.status, body, res }
}

/** USD → micro-USD, for exact balance checks. */
export const micros = (usd: number) => Math.round(usd * 1e6)

/** Model entries with unit prices (`per_image`, `per_minute` …), which the config accepts beyond its typed fields. */
export const priceList = (models: Array<{ name: string } & Record<string, string | number>>): GatewayConfig['models'] => models as unknown as GatewayConfig['models']

/**
 * A slow database, as far as billing goes: every hold the ledger gives from now on settles `ms` late (its money goes
 * back, and its usage row is written, that much after the answer ended). Returns the function that undoes it.
 */
export function slowSettlement(ledger: TestApp['svc']['ledger'], ms: number): () => void {
	const { reserve, reserveNow } = ledger
	const slow = <H extends { settle: (...a: any[]) => Promise<number> } | undefined>(h: H): H => {
		if (!h) return h
		const settle = h.settle.bind(h)
		h.settle = async (...a) => (await Bun.sleep(ms), settle(...a))
		return h
	}
	ledger.reserve = async (...a) => slow(await reserve(...a))
	ledger.reserveNow = (...a) => slow(reserveNow(...a))
	return () => {
		ledger.reserve = reserve
		ledger.reserveNow = reserveNow
	}
}
