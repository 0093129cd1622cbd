/**
 * Claude on Amazon Bedrock's request format, as Claude Code speaks it to a gateway (`CLAUDE_CODE_USE_BEDROCK=1` with
 * `ANTHROPIC_BEDROCK_BASE_URL`, one of the three gateway formats Claude Code documents) and as the Anthropic Bedrock
 * SDK sends it: `POST {base}/model/{modelId}/invoke` (or `/invoke-with-response-stream`), an Anthropic Messages body
 * with the model in the URL and `anthropic_version` and `anthropic_beta` in the body. Each is served as the
 * `/v1/messages` call it is, for any model; a stream goes back framed as Bedrock frames it (AWS event-stream, each
 * Anthropic event a `chunk` whose `bytes` are its JSON), an error event as an exception message.
 * @module
 */
import { GatewayError } from '../core/errors'
import { readJsonObject } from './raw-json'
import { createSseParser, type SseFrame } from '../core/sse'
import { encodeMessage } from '../providers/aws/event-stream'

const INVOKE = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/

/** The Anthropic API version a Bedrock body stands for (Bedrock's `bedrock-2023-05-31` is that API's). */
const ANTHROPIC_VERSION = '2023-06-01'

export type BedrockCall = { model: string; stream: boolean }

/** The model and mode a Bedrock path names, or undefined when it is not one. */
export function bedrockCall(path: string): BedrockCall | undefined {
	const m = INVOKE.exec(path)
	return m ? { model: decodeURIComponent(m[1]!), stream: m[2] === 'invoke-with-response-stream' } : undefined
}

/** The request as the gateway serves it: `/v1/messages` with the model and `stream` in the body, the betas as a header. */
export async function fromBedrock(request: Request, call: BedrockCall): Promise<Request | GatewayError> {
	const body = await readJsonObject(request)
	if (body instanceof GatewayError) return body
	const { anthropic_version: _version, anthropic_beta: betas, ...rest } = body
	const url = new URL(request.url)
	url.pathname = '/v1/messages'
	const headers = new Headers(request.headers)
	headers.delete('content-length')
	headers.set('content-type', 'application/json')
	if (!headers.has('anthropic-version')) headers.set('anthropic-version', ANTHROPIC_VERSION)
	const beta = [headers.get('anthropic-beta'), ...(Array.isArray(betas) ? betas.filter((b) => typeof b === 'string') : [])].filter(Boolean).join(',')
	if (beta) headers.set('anthropic-beta', beta)
	return new Request(url, { method: 'POST', headers, body: JSON.stringify({ ...rest, model: call.model, stream: call.stream }), signal: request.signal })
}

/** Bedrock's exception for an Anthropic error event's type (what its SDKs read from `:exception-type`). */
const EXCEPTIONS: Record<string, string> = {
	rate_limit_error: 'throttlingException',
	overloaded_error: 'serviceUnavailableException',
	invalid_request_error: 'validationException',
}

const text = new TextEncoder()

/** One SSE frame as Bedrock's event-stream message; nothing for a frame without data. */
function framed(f: SseFrame): Uint8Array | undefined {
	if (!f.data) return undefined
	if (f.event === 'error') {
		let type = ''
		let message = f.data
		try {
			const e = (JSON.parse(f.data) as { error?: { type?: string; message?: string } }).error
			type = e?.type ?? ''
			message = e?.message ?? message
		} catch {
			// the text as it is
		}
		const exception = EXCEPTIONS[type] ?? 'internalServerException'
		return encodeMessage({ ':exception-type': exception, ':content-type': 'application/json', ':message-type': 'exception' }, text.encode(JSON.stringify({ message })))
	}
	const payload = JSON.stringify({ bytes: Buffer.from(f.data).toString('base64') })
	return encodeMessage({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, text.encode(payload))
}

/** A streamed answer (Anthropic's SSE) framed as Bedrock streams it; any other answer (JSON, an error) as it is. */
export function asEventStream(res: Response): Response {
	if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res
	const parser = createSseParser()
	const decoder = new TextDecoder()
	const emit = (frames: SseFrame[], c: TransformStreamDefaultController<Uint8Array>) => {
		for (const f of frames) {
			const m = framed(f)
			if (m) c.enqueue(m)
		}
	}
	const body = res.body.pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform: (chunk, c) => emit(parser.push(decoder.decode(chunk, { stream: true })), c),
			flush: (c) => emit(parser.end(decoder.decode()), c),
		}),
	)
	const headers = new Headers(res.headers)
	headers.set('content-type', 'application/vnd.amazon.eventstream')
	headers.delete('content-length')
	return new Response(body, { status: res.status, headers })
}
