/**
 * Mock of Gemini's Live API over WebSocket (`wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.
 * v1beta.GenerativeService.BidiGenerateContent`), from the documented messages (ai.google.dev/api/live): the key in
 * `x-goog-api-key` or `?key=` (another is closed 1007 "API key not valid. Please pass a valid API key."); the first
 * message must be `setup` naming a `models/…` model (else 1007 "Request contains an invalid argument."), answered
 * `setupComplete`. A `clientContent` with `turnComplete` (or `realtimeInput` text) is answered with two
 * `serverContent.modelTurn` messages (text parts, or PCM16 24 kHz `inlineData` when the setup's
 * `generationConfig.responseModalities` is AUDIO), `generationComplete`, then `turnComplete` carrying the turn's
 * `usageMetadata` (`LIVE_USAGE` / `LIVE_AUDIO_USAGE`). When the setup declares functions and the text asks for
 * `weather`, the turn first sends a `toolCall` (with `LIVE_TOOL_CALL_USAGE`) and waits for the `toolResponse`, then
 * answers from its `response` and completes with `LIVE_USAGE`. Audio in `realtimeInput` is answered when the user's
 * activity ends (`activityEnd`, or `audioStreamEnd`). Client messages are read under their lowerCamel or snake_case
 * names, as Google's proto-JSON parser reads them (google-genai for Python sends `client_content`, `realtime_input`,
 * `tool_response`); a `clientContent` without `turnComplete: true` only adds to the context (the field's default is
 * false). Like Google's, every server message is a binary frame
 * of JSON. Test knobs, as the user's text: `mock:hold` stops after the first part (the turn never completes),
 * `mock:hangup` closes the socket (1011) after it; the same knobs as a tool response's `output` act on the answer
 * after the tool call.
 * Its own server, since the shared mock server speaks HTTP only. Records every handshake and every frame received.
 * @module
 */
import type { ServerWebSocket } from 'bun'

/** `usageMetadata` of a completed text turn. */
export const LIVE_USAGE = {
	promptTokenCount: 30,
	responseTokenCount: 12,
	totalTokenCount: 42,
	promptTokensDetails: [{ modality: 'TEXT', tokenCount: 30 }],
	responseTokensDetails: [{ modality: 'TEXT', tokenCount: 12 }],
}

/** `usageMetadata` of the generation that ends in a tool call. */
export const LIVE_TOOL_CALL_USAGE = {
	promptTokenCount: 25,
	responseTokenCount: 8,
	totalTokenCount: 33,
	promptTokensDetails: [{ modality: 'TEXT', tokenCount: 25 }],
	responseTokensDetails: [{ modality: 'TEXT', tokenCount: 8 }],
}

/** `usageMetadata` of a completed audio turn: 20 of the prompt's tokens and 100 of the response's are audio. */
export const LIVE_AUDIO_USAGE = {
	promptTokenCount: 50,
	responseTokenCount: 110,
	totalTokenCount: 160,
	promptTokensDetails: [
		{ modality: 'TEXT', tokenCount: 30 },
		{ modality: 'AUDIO', tokenCount: 20 },
	],
	responseTokensDetails: [
		{ modality: 'TEXT', tokenCount: 10 },
		{ modality: 'AUDIO', tokenCount: 100 },
	],
}

export type LiveHandshake = { url: string; headers: Record<string, string> }

export type LiveMock = {
	/** http:// root, as a Gemini channel's `base_url`. */
	url: string
	handshakes: LiveHandshake[]
	/** Text of the frames received from the gateway, in order. */
	received: string[]
	/** Sockets the gateway closed, with their close code. */
	closed: number[]
	stop(): Promise<void>
}

type Conn = { keyOk: boolean; setup?: Record<string, any>; pendingCall?: { id: string; name: string }; heard?: boolean }

/** A field under its lowerCamel or its snake_case name: Google's proto-JSON parser takes both (google-genai for Python sends `client_content`). */
const field = (o: any, camel: string): any => o?.[camel] ?? o?.[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]

const PATH = /^\/\/?ws\/google\.ai\.generativelanguage\.(v1|v1beta|v1alpha)\.GenerativeService\.BidiGenerateContent$/
const AUDIO = Buffer.alloc(4800).toString('base64')

export async function startLiveMock(opts: { apiKey: string }): Promise<LiveMock> {
	const handshakes: LiveHandshake[] = []
	const received: string[] = []
	const closed: number[] = []
	const send = (ws: ServerWebSocket<Conn>, msg: Record<string, unknown>): void => void ws.send(new TextEncoder().encode(JSON.stringify(msg)))

	const audioOut = (ws: ServerWebSocket<Conn>) => (ws.data.setup?.generationConfig?.responseModalities ?? []).includes('AUDIO')
	const part = (ws: ServerWebSocket<Conn>, text: string) => (audioOut(ws) ? { inlineData: { mimeType: 'audio/pcm;rate=24000', data: AUDIO } } : { text })

	/** Answers a turn: two parts, then (unless held) its end with `usage`. */
	const answer = (ws: ServerWebSocket<Conn>, words: [string, string], usage: Record<string, unknown>, knob: string) => {
		send(ws, { serverContent: { modelTurn: { role: 'model', parts: [part(ws, words[0])] } } })
		if (knob === 'mock:hold') return
		if (knob === 'mock:hangup') return ws.close(1011, 'mock hangup')
		send(ws, { serverContent: { modelTurn: { role: 'model', parts: [part(ws, words[1])] } } })
		send(ws, { serverContent: { generationComplete: true } })
		send(ws, { serverContent: { turnComplete: true }, usageMetadata: usage })
	}

	const userTurn = (ws: ServerWebSocket<Conn>, text: string) => {
		const fns = (ws.data.setup?.tools ?? []).flatMap((t: any) => t?.functionDeclarations ?? [])
		if (fns.length && /weather/i.test(text)) {
			const call = { id: `call_${handshakes.length}_${received.length}`, name: String(fns[0].name) }
			ws.data.pendingCall = call
			send(ws, { toolCall: { functionCalls: [{ ...call, args: { city: 'Paris' } }] }, usageMetadata: LIVE_TOOL_CALL_USAGE })
			return
		}
		answer(ws, ['Hello', ' there'], audioOut(ws) ? LIVE_AUDIO_USAGE : LIVE_USAGE, text.trim())
	}

	const server = Bun.serve<Conn>({
		port: 0,
		hostname: '127.0.0.1',
		fetch(req, srv) {
			const url = new URL(req.url)
			if (!PATH.test(url.pathname)) return new Response('Not Found', { status: 404 })
			const headers: Record<string, string> = {}
			req.headers.forEach((v, k) => (headers[k] = v))
			handshakes.push({ url: req.url, headers })
			const key = req.headers.get('x-goog-api-key') ?? url.searchParams.get('key')
			if (srv.upgrade(req, { data: { keyOk: key === opts.apiKey } })) return
			return new Response('Upgrade Required', { status: 426 })
		},
		websocket: {
			open(ws) {
				if (!ws.data.keyOk) ws.close(1007, 'API key not valid. Please pass a valid API key.')
			},
			message(ws, data) {
				const text = typeof data === 'string' ? data : new TextDecoder().decode(data)
				received.push(text)
				let msg: Record<string, any>
				try {
					msg = JSON.parse(text)
				} catch {
					return ws.close(1007, 'Invalid JSON payload received.')
				}
				if (!ws.data.setup) {
					if (typeof msg.setup?.model !== 'string' || !msg.setup.model.startsWith('models/')) return ws.close(1007, 'Request contains an invalid argument.')
					ws.data.setup = msg.setup
					return send(ws, { setupComplete: {} })
				}
				const content = field(msg, 'clientContent')
				if (content) {
					if (field(content, 'turnComplete') !== true) return
					const turns: any[] = content.turns ?? []
					const last = turns.at(-1)?.parts?.map((p: any) => p?.text ?? '').join('') ?? ''
					return userTurn(ws, last)
				}
				const realtime = field(msg, 'realtimeInput')
				if (typeof realtime?.text === 'string') return userTurn(ws, realtime.text)
				if (realtime?.audio || field(realtime, 'mediaChunks')) ws.data.heard = true
				// The end of the user's speech (manual activity detection, or the stream paused) answers what was heard.
				if (ws.data.heard && (field(realtime, 'activityEnd') || field(realtime, 'audioStreamEnd'))) {
					ws.data.heard = false
					return userTurn(ws, '')
				}
				const toolResponse = field(msg, 'toolResponse')
				if (toolResponse) {
					const responses: any[] = field(toolResponse, 'functionResponses') ?? []
					const r = responses.find((x) => x?.id === ws.data.pendingCall?.id)
					if (!r) return ws.close(1007, 'Request contains an invalid argument.')
					ws.data.pendingCall = undefined
					const output = String(r.response?.output ?? r.response?.result ?? JSON.stringify(r.response))
					return answer(ws, ['It is ', output], LIVE_USAGE, output.startsWith('mock:') ? output : '')
				}
			},
			close(_ws, code) {
				closed.push(code)
			},
		},
	})
	return {
		url: `http://127.0.0.1:${server.port}`,
		handshakes,
		received,
		closed,
		stop: async () => void (await server.stop(true)),
	}
}
