/**
 * Claude on Vertex AI's request format, as Claude Code speaks it to a gateway (`CLAUDE_CODE_USE_VERTEX=1` with
 * `ANTHROPIC_VERTEX_BASE_URL`, one of the three gateway formats Claude Code documents) and as the Anthropic Vertex SDK
 * sends it: `POST {base}/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict` (or
 * `:streamRawPredict`, or `count-tokens:rawPredict`), an Anthropic Messages body with the model in the URL and
 * `anthropic_version` in the body. Each is served as the `/v1/messages` call it is, for any model; the answers are
 * Anthropic's, as Vertex's are.
 * @module
 */
import { GatewayError } from '../core/errors'
import { readJsonObject } from './raw-json'

/** The Anthropic API version a Vertex body stands for (Vertex's `vertex-2023-10-16` is that API's). */
const ANTHROPIC_VERSION = '2023-06-01'

const RAW_PREDICT = /^(?:\/v1(?:beta1)?)?\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/

/** The model and method a Vertex path names, or undefined when it is not one. */
export function vertexCall(path: string): { model: string; method: 'rawPredict' | 'streamRawPredict' } | undefined {
	const m = RAW_PREDICT.exec(path)
	return m ? { model: decodeURIComponent(m[1]!), method: m[2] as 'rawPredict' | 'streamRawPredict' } : undefined
}

/**
 * The request as the gateway serves it: `/v1/messages` (or `/v1/messages/count_tokens` for `count-tokens`) with the
 * model in the body, `stream` as the method says, and the Anthropic version as a header rather than a body field.
 */
export async function fromVertex(request: Request, call: { model: string; method: 'rawPredict' | 'streamRawPredict' }): Promise<Request | GatewayError> {
	const body = await readJsonObject(request)
	if (body instanceof GatewayError) return body
	const { anthropic_version: _version, ...rest } = body
	const counting = call.model === 'count-tokens'
	const out = counting ? rest : { ...rest, model: call.model, stream: call.method === 'streamRawPredict' }
	const url = new URL(request.url)
	url.pathname = counting ? '/v1/messages/count_tokens' : '/v1/messages'
	const headers = new Headers(request.headers)
	headers.delete('content-length')
	headers.set('content-type', 'application/json')
	if (!headers.has('anthropic-version')) headers.set('anthropic-version', ANTHROPIC_VERSION)
	return new Request(url, { method: 'POST', headers, body: JSON.stringify(out), signal: request.signal })
}
