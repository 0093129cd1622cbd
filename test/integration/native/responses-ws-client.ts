/**
 * The Responses API WebSocket mode's test client: the openai SDK's `ResponsesWS` connected to a gateway with a key,
 * keeping every event it received (error events too: the SDK also raises them as `error`), with waits for the events
 * a test expects.
 */
import OpenAI from 'openai'
import { ResponsesWS } from 'openai/resources/responses/ws'

export type WsEvent = { type: string; [k: string]: any }

export type WsClient = ReturnType<typeof connectResponsesWS>

/** A connection to `url` (the gateway's root) with `key`; `opened`: when it was made (performance.now()). */
export function connectResponsesWS(url: string, key: string) {
	const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 })
	const ws = new ResponsesWS(client)
	const events: WsEvent[] = []
	const errors: Array<{ message: string; error?: any }> = []
	ws.on('event', (e: WsEvent) => events.push(e))
	ws.on('error', (e: any) => errors.push(e))
	/** The close's code and when it came (performance.now()). */
	const closed = new Promise<{ code: number; at: number }>((resolve) => ws.on('close', (code: number) => resolve({ code, at: performance.now() })))
	const waitFor = async (pick: () => WsEvent | undefined, what: string, ms: number): Promise<WsEvent> => {
		const end = Date.now() + ms
		for (;;) {
			const e = pick()
			if (e) return e
			if (Date.now() > end) throw new Error(`no ${what} in ${JSON.stringify(events.map((x) => x.type))}`)
			await Bun.sleep(10)
		}
	}
	/** The first event of one of these types after the first `from` events. */
	const next = (types: string[], from = 0, ms = 10_000) => waitFor(() => events.slice(from).find((x) => types.includes(x.type)), types.join('/'), ms)
	/** The `n`th event (from 0) of one of these types. */
	const nth = (types: string[], n = 0, ms = 10_000) => waitFor(() => events.filter((x) => types.includes(x.type))[n], `${types.join('/')} #${n}`, ms)
	return { ws, events, errors, closed, next, nth, opened: performance.now() }
}
