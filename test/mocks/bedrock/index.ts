/**
 * Mock Amazon Bedrock runtime: Claude over InvokeModel (POST /model/{modelId}/invoke and
 * /model/{modelId}/invoke-with-response-stream), and every model over Converse (`/converse`, `/converse-stream`:
 * converse.ts), with Bedrock's rules and shapes
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html):
 * - auth: a Bedrock API key (`Authorization: Bearer`), or IAM keys signed with SigV4, checked for real (sigv4.ts), or a
 *   role's temporary keys issued by the metadata mock (`roleKeys`: metadata.ts), refused 403 ExpiredTokenException once
 *   expired;
 * - body: Anthropic's Messages body with `anthropic_version: "bedrock-2023-05-31"`, no `model` or `stream` (400
 *   ValidationException "extraneous key [model] is not permitted"), betas in `anthropic_beta`, one outside `betas` (AWS's
 *   documented list by default; empty for a model that takes none, as Opus 4.7 did) refused 400 "invalid beta flag";
 *   a system prompt naming `x-anthropic-billing-header` (Claude Code's attribution line) refused 400 as a reserved keyword;
 * - errors: `{"message": …}` with `x-amzn-errortype`; streams as AWS event-stream frames with CRCs (event-stream.ts),
 *   `message_stop` carrying `amazon-bedrock-invocationMetrics`, in-stream exceptions as `exception` messages.
 * - CountTokens (`POST /model/{modelId}/count-tokens`,
 *   https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html): Claude's foundation model ids
 *   only (an inference profile or another model: 400 "The provided model doesn't support counting tokens."); the input
 *   `invokeModel.body` (base64 of the InvokeModel body, validated as for /invoke) or `converse` (messages, system);
 *   answers `{"inputTokens": n}`, the scenario's count;
 * - application inference profiles: `profiles` maps an ARN to the foundation model it serves, over InvokeModel (Claude's)
 *   and Converse alike; the control plane's GetInferenceProfile (`GET /inference-profiles/{ARN or id, encoded}`,
 *   https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetInferenceProfile.html) names it as
 *   `models[].modelArn` (a foundation-model ARN per region; three for a profile copied from a cross-region one), the
 *   same auth checked; 403 AccessDeniedException while `lookupDenied` (a role without bedrock:GetInferenceProfile),
 *   404 ResourceNotFoundException for another; answered after `lookupDelayMs`; `lookups` counts the calls;
 * - guardrails (`guardrails`: guardrail.ts): taken in InvokeModel's headers and Converse's `guardrailConfig`, checked,
 *   and intervening on their trigger word as Bedrock answers then; Claude's stream scanned in sync mode unless the body
 *   asks async (`amazon-bedrock-guardrailConfig`); an `enforced` one on every call.
 * What Claude answers comes from the Anthropic mock (one runs inside, under the model id's Claude name), so the
 * scenarios are the same as everywhere (README).
 * @module
 */
import { startAnthropicMock } from '../anthropic'
import { midConversationSystem } from '../anthropic/read'
import type { RecordedRequest } from '../shared/types'
import { inputTokens } from '../shared/scenario'
import { answerConverse, converseEvent, converseSignature, readConverse } from './converse'
import { chunkMessage, exceptionMessage, frameMessage } from './event-stream'
import {
	claudeTexts,
	converseIntervened,
	converseTexts,
	enforcedGuard,
	type Guard,
	guardOutputEvents,
	guardOutputJson,
	invokeIntervened,
	type MockGuardrail,
	readConverseGuardrail,
	readInvokeGuardrail,
	readStreamMode,
	STREAM_CONFIG,
	triggered,
} from './guardrail'
import type { AwsMetadataMock } from './metadata'
import { checkSigV4, type IamKeys } from './sigv4'

export type BedrockFault =
	/** Answer with this status and Bedrock's error body (`type` in `x-amzn-errortype`, e.g. ThrottlingException). */
	| { kind: 'status'; status: number; type: string; message?: string }
	/** After `afterEvents` stream events, an exception message (`throttlingException`, `modelStreamErrorException`…), then the end. */
	| { kind: 'exception'; afterEvents: number; type: string; message?: string }
	/** The stream's message at `atEvent` with a wrong message CRC. */
	| { kind: 'bad-crc'; atEvent: number }

export type BedrockMockOptions = {
	/** The Bedrock API key taken as a bearer token. */
	apiKey: string
	/** The IAM keys whose SigV4 signatures are taken. */
	iam: IamKeys
	/** The region signatures must be scoped to. */
	region: string
	/** Model ids served (others: 400 ValidationException as Bedrock answers an unknown id). */
	models: string[]
	/** Application inference profile ARNs (also in `models`) → the foundation model each serves. */
	profiles?: Record<string, string>
	/** Temporary keys of a role (the AWS metadata mock's), taken as well as `iam`. */
	roleKeys?: Pick<AwsMetadataMock, 'keysFor'>
	/** The account's guardrails by identifier (an id or an ARN): their versions and trigger words (guardrail.ts). */
	guardrails?: Record<string, MockGuardrail>
	/** The identifier (in `guardrails`) of the account's enforced guardrail, applied to every call unasked (guardrail.ts). */
	enforced?: string
}

/** The `anthropic_beta` values AWS documents for Claude over InvokeModel (model-parameters-anthropic-claude-messages-request-response). */
const DOCUMENTED_BETAS = [
	'computer-use-2024-10-22',
	'computer-use-2025-01-24',
	'token-efficient-tools-2025-02-19',
	'interleaved-thinking-2025-05-14',
	'output-128k-2025-02-19',
	'dev-full-thinking-2025-05-14',
	'context-1m-2025-08-07',
	'context-management-2025-06-27',
	'effort-2025-11-24',
	'tool-search-tool-2025-10-19',
	'tool-examples-2025-10-29',
]

/**
 * Claude Code's attribution line (`x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;`, the first block of its
 * system prompt) is Anthropic's own: Bedrock refuses a system prompt naming it, 400 ValidationException with these
 * words, as reported of InvokeModel(WithResponseStream) since Claude Code 2.1.15 (github.com/anthropics/claude-code/issues/24168,
 * github.com/musistudio/claude-code-router/issues/1161, github.com/BerriAI/litellm/pull/29701, which strips it for Bedrock alone).
 */
const RESERVED_KEYWORD = 'x-anthropic-billing-header is a reserved keyword and may not be used in the system prompt.'
const reservedInSystem = (system: unknown): boolean =>
	(typeof system === 'string' ? [system] : Array.isArray(system) ? system.map((x) => x?.text) : []).some((t) => typeof t === 'string' && t.includes('x-anthropic-billing-header'))

export type BedrockMock = {
	readonly url: string
	readonly requests: RecordedRequest[]
	fault: BedrockFault | undefined
	faultOnce: BedrockFault | undefined
	/** GetInferenceProfile is refused 403 AccessDeniedException, as to a role without bedrock:GetInferenceProfile. */
	lookupDenied: boolean
	/** GetInferenceProfile answers after this many milliseconds. */
	lookupDelayMs: number
	/** GetInferenceProfile calls received (refused ones too) since the last reset. */
	readonly lookups: number
	/** The betas InvokeModel takes; any other is 400 ValidationException "invalid beta flag" (naming none). */
	betas: Set<string>
	reset(): void
	stop(): Promise<void>
}

const INNER_KEY = 'inner-anthropic'

/** `us.anthropic.claude-sonnet-4-6-v1:0`, `anthropic.claude-haiku-4-5-20251001-v1:0`, an ARN ending in either → `claude-…`. */
const claudeName = (id: string) =>
	id
		.replace(/^.*\//, '')
		.replace(/^(?:[a-z]{2,4}\.)?anthropic\./, '')
		.replace(/-v\d+(?::\d+)?$/, '')

const errorResponse = (status: number, type: string, message: string) =>
	new Response(JSON.stringify({ message }), {
		status,
		headers: { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': crypto.randomUUID() },
	})

/** An Anthropic error answer (`{type:'error', error:{type,message}}`) in Bedrock's words. */
const BEDROCK_TYPE: Record<number, string> = {
	400: 'ValidationException',
	403: 'AccessDeniedException',
	404: 'ResourceNotFoundException',
	429: 'ThrottlingException',
	529: 'ServiceUnavailableException',
}

/**
 * Starts the mock on a free port; `url` is the origin to give as the channel's base_url.
 * @example const m = await startBedrockMock({ apiKey: 'ABSK…', iam: { accessKeyId: 'AKIA…', secretAccessKey: '…' }, region: 'us-east-1', models: ['us.anthropic.claude-sonnet-4-6-v1:0'] })
 */
export async function startBedrockMock(opts: BedrockMockOptions): Promise<BedrockMock> {
	const inner = await startAnthropicMock({ apiKey: INNER_KEY, record: false })
	const requests: RecordedRequest[] = []
	/** Prompt prefixes written to the cache (converse.ts). */
	const cache = new Set<string>()

	async function handle(req: Request): Promise<Response> {
		const f = mock.faultOnce ?? mock.fault
		mock.faultOnce = undefined
		// The raw path as sent (`%3A` stays encoded): SigV4 signs it so.
		const rawPath = req.url.replace(/^https?:\/\/[^/]+/, '').replace(/\?.*$/, '')
		const url = new URL(req.url)
		const text = await req.text()
		let body: unknown
		try {
			body = text ? JSON.parse(text) : undefined
		} catch {
			body = text
		}
		requests.push({ method: req.method, path: rawPath, query: Object.fromEntries(url.searchParams), headers: Object.fromEntries(req.headers), body, text, at: Date.now() })

		const auth = req.headers.get('authorization') ?? ''
		if (auth.startsWith('Bearer ')) {
			if (auth.slice(7) !== opts.apiKey) return errorResponse(403, 'AccessDeniedException', 'Authentication failed: Please make sure your API Key is valid.')
		} else if (auth.startsWith('AWS4-HMAC-SHA256 ')) {
			const role = opts.roleKeys?.keysFor(/Credential=([^/]+)\//.exec(auth)?.[1] ?? '')
			if (role?.expired) return errorResponse(403, 'ExpiredTokenException', 'The security token included in the request is expired')
			const bad = checkSigV4({ method: req.method, rawPath, query: url.searchParams, headers: req.headers, body: text }, role?.keys ?? opts.iam, opts.region)
			if (bad) return errorResponse(bad.status, bad.type, bad.message)
		} else return errorResponse(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token')

		const profile = /^\/inference-profiles\/([^/]+)$/.exec(rawPath)
		if (profile && req.method === 'GET') return inferenceProfile(decodeURIComponent(profile[1]!))
		const m = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/.exec(rawPath)
		if (req.method !== 'POST' || !m) return errorResponse(404, 'UnknownOperationException', 'Unknown operation')
		const modelId = decodeURIComponent(m[1]!)
		if (m[2] === 'count-tokens') return countTokens(modelId, body, f)
		if (!opts.models.includes(modelId)) return errorResponse(400, 'ValidationException', 'The provided model identifier is invalid.')
		if (m[2] === 'converse' || m[2] === 'converse-stream') return converse(opts.profiles?.[modelId] ?? modelId, body, m[2] === 'converse-stream', f, req.headers)
		const streamed = m[2] === 'invoke-with-response-stream'
		if (typeof body !== 'object' || body === null || Array.isArray(body)) return errorResponse(400, 'ValidationException', 'Malformed input request, please reformat your input and try again.')
		const b = body as Record<string, unknown>
		// An application inference profile's ARN is served by its foundation model, over InvokeModel as over Converse.
		const foundation = opts.profiles?.[modelId] ?? modelId
		const malformed = (why: string) => errorResponse(400, 'ValidationException', `Malformed input request: ${why}, please reformat your input and try again.`)
		// InvokeModel takes each model's native body: Anthropic's is Claude's alone (Nova's, Llama's… differ).
		if (!foundation.includes('anthropic.claude')) return malformed('#: extraneous key [anthropic_version] is not permitted')
		for (const key of ['model', 'stream']) if (key in b) return malformed(`#: extraneous key [${key}] is not permitted`)
		if (b.anthropic_version !== 'bedrock-2023-05-31') return malformed('#: required key [anthropic_version] not found or invalid')
		const betas = b.anthropic_beta
		if (betas !== undefined && (!Array.isArray(betas) || betas.some((x) => typeof x !== 'string'))) return malformed('#/anthropic_beta: expected type: JSONArray')
		if (Array.isArray(betas) && betas.some((x) => !mock.betas.has(x))) return errorResponse(400, 'ValidationException', 'invalid beta flag')
		if (reservedInSystem(b.system)) return errorResponse(400, 'ValidationException', RESERVED_KEYWORD)
		// A system message mid-conversation stands only with its beta, as on Anthropic's API.
		const midSystem = midConversationSystem(b.messages, Array.isArray(betas) ? betas : [])
		if (midSystem !== undefined) return errorResponse(400, 'ValidationException', `messages.${midSystem}.role: Input should be 'user' or 'assistant'`)
		if (f?.kind === 'status') return errorResponse(f.status, f.type, f.message ?? `${f.type} from the mock`)
		const guarded = readInvokeGuardrail(req.headers, opts.guardrails ?? {})
		if ('invalid' in guarded) return errorResponse(guarded.invalid.status, guarded.invalid.type, guarded.invalid.message)
		const mode = readStreamMode(b, guarded.guard !== undefined, streamed)
		if ('invalid' in mode) return errorResponse(mode.invalid.status, mode.invalid.type, mode.invalid.message)
		const guards = [guarded.guard, enforcedGuard(opts.guardrails ?? {}, opts.enforced)].filter((g): g is Guard => g !== undefined)
		const texts = claudeTexts(b)
		const blocked = guards.find((g) => triggered(texts, g.trigger))
		if (blocked) return invokeIntervened(claudeName(foundation), inputTokens({ inputTexts: texts, images: 0 }), blocked, streamed)
		const scan = guards.find((g) => g.outputTrigger)

		const { anthropic_version: _v, anthropic_beta: _b, [STREAM_CONFIG]: _g, ...rest } = b
		const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': INNER_KEY, 'anthropic-version': '2023-06-01' }
		if (Array.isArray(betas) && betas.length) headers['anthropic-beta'] = betas.join(',')
		const up = await fetch(`${inner.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ ...rest, model: claudeName(foundation), stream: streamed }) })
		if (!up.ok) {
			const said = (await up.json().catch(() => ({}))) as { error?: { message?: string } }
			return errorResponse(up.status === 529 ? 503 : up.status, BEDROCK_TYPE[up.status] ?? 'InternalServerException', said.error?.message ?? 'error')
		}
		const common = { 'x-amzn-requestid': crypto.randomUUID() }
		if (!streamed) {
			const answer = await up.text()
			return new Response(scan ? guardOutputJson(answer, scan) : answer, { status: 200, headers: { 'content-type': 'application/json', ...common } })
		}
		return new Response(framed(up.body!, f, scan && { guard: scan, async: mode.async }), {
			status: 200,
			headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json', ...common },
		})
	}

	/** GetInferenceProfile of an application inference profile in `profiles`, by its ARN or its id. */
	async function inferenceProfile(identifier: string): Promise<Response> {
		if (mock.lookupDenied)
			return errorResponse(
				403,
				'AccessDeniedException',
				`User: arn:aws:iam::111122223333:user/gateway is not authorized to perform: bedrock:GetInferenceProfile on resource: ${identifier} because no identity-based policy allows the bedrock:GetInferenceProfile action`,
			)
		const arn = Object.keys(opts.profiles ?? {}).find((a) => a === identifier || a.endsWith(`/${identifier}`))
		if (!arn) return errorResponse(404, 'ResourceNotFoundException', 'The specified inference profile was not found.')
		if (mock.lookupDelayMs) await Bun.sleep(mock.lookupDelayMs)
		const served = opts.profiles![arn]!
		// Copied from a cross-region profile (`us.anthropic.…`): the foundation model in each region it routes to.
		const geo = /^(?:us|eu|apac|us-gov|jp|au|ca|global)\.(.+)$/.exec(served)
		const regions = geo ? [opts.region, 'us-east-2', 'us-west-2'] : [opts.region]
		const at = new Date('2025-06-01T12:00:00Z').toISOString()
		return Response.json(
			{
				inferenceProfileName: 'team-profile',
				description: 'cost tracking',
				createdAt: at,
				updatedAt: at,
				inferenceProfileArn: arn,
				models: regions.map((r) => ({ modelArn: `arn:aws:bedrock:${r}::foundation-model/${geo ? geo[1] : served}` })),
				inferenceProfileId: arn.slice(arn.lastIndexOf('/') + 1),
				status: 'ACTIVE',
				type: 'APPLICATION',
			},
			{ headers: { 'x-amzn-requestid': crypto.randomUUID() } },
		)
	}

	/** Converse for every model the mock serves (Claude too, as Bedrock does), answered by the shared scenario. */
	function converse(modelId: string, body: unknown, streamed: boolean, f: BedrockFault | undefined, headers: Headers): Response {
		const read = readConverse(modelId, body)
		if ('invalid' in read) return errorResponse(400, 'ValidationException', read.invalid)
		if (f?.kind === 'status') return errorResponse(f.status, f.type, f.message ?? `${f.type} from the mock`)
		// Converse takes its guardrail in the body only: InvokeModel's headers there are a sign of a confused caller.
		if (headers.has('x-amzn-bedrock-guardrailidentifier')) return errorResponse(400, 'ValidationException', '(mock) Converse takes its guardrail in guardrailConfig, not in X-Amzn-Bedrock-GuardrailIdentifier')
		const guarded = readConverseGuardrail(body, streamed, opts.guardrails ?? {})
		if ('invalid' in guarded) return errorResponse(guarded.invalid.status, guarded.invalid.type, guarded.invalid.message)
		const texts = converseTexts(body as Record<string, unknown>)
		const blocked = [guarded.guard, enforcedGuard(opts.guardrails ?? {}, opts.enforced)].find((g) => g && triggered(texts, g.trigger))
		if (blocked) return converseIntervened(inputTokens(read.conv), blocked, streamed)
		const { body: answer, events } = answerConverse(read, cache)
		const common = { 'x-amzn-requestid': crypto.randomUUID() }
		if (!streamed) return Response.json(answer, { headers: common })
		return new Response(converseFramed(events, f), { status: 200, headers: { 'content-type': 'application/vnd.amazon.eventstream', ...common } })
	}

	/**
	 * CountTokens: Claude foundation models only, whose base id is one the mock serves under some inference profile or
	 * itself; the count is the scenario's (words of the system prompt and the messages' text).
	 */
	function countTokens(modelId: string, body: unknown, f: BedrockFault | undefined): Response {
		const served = opts.models.some((id) => id === modelId || id.endsWith(`.${modelId}`))
		if (!/^anthropic\.claude/.test(modelId) || !served) return errorResponse(400, 'ValidationException', "The provided model doesn't support counting tokens.")
		if (f?.kind === 'status') return errorResponse(f.status, f.type, f.message ?? `${f.type} from the mock`)
		const input = (body as { input?: Record<string, unknown> } | undefined)?.input
		const keys = Object.keys(input ?? {})
		if (!input || keys.length !== 1 || (keys[0] !== 'invokeModel' && keys[0] !== 'converse')) return errorResponse(400, 'ValidationException', 'input: exactly one of invokeModel, converse is required')
		let texts: string[]
		if (keys[0] === 'invokeModel') {
			const raw = (input.invokeModel as { body?: unknown }).body
			let b: Record<string, unknown>
			try {
				b = JSON.parse(Buffer.from(String(raw), 'base64').toString('utf8')) as Record<string, unknown>
			} catch {
				return errorResponse(400, 'ValidationException', 'Malformed input request, please reformat your input and try again.')
			}
			for (const key of ['model', 'stream', 'mcp_servers']) if (key in b) return errorResponse(400, 'ValidationException', `Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`)
			if (b.anthropic_version !== 'bedrock-2023-05-31' || typeof b.max_tokens !== 'number') return errorResponse(400, 'ValidationException', 'Malformed input request: #: required key [anthropic_version] or [max_tokens] not found, please reformat your input and try again.')
			if (reservedInSystem(b.system)) return errorResponse(400, 'ValidationException', RESERVED_KEYWORD)
			const blocks = (c: unknown): string[] => (typeof c === 'string' ? [c] : Array.isArray(c) ? c.flatMap((x) => (x?.type === 'text' ? [String(x.text)] : x?.type === 'tool_result' ? blocks(x.content) : [])) : [])
			texts = [...blocks(b.system), ...((b.messages as Array<{ content?: unknown }>) ?? []).flatMap((msg) => blocks(msg.content))]
		} else {
			const c = input.converse as { messages?: Array<{ content?: Array<{ text?: string }> }>; system?: Array<{ text?: string }> }
			texts = [...(c.system ?? []), ...(c.messages ?? []).flatMap((msg) => msg.content ?? [])].flatMap((x) => (typeof x.text === 'string' ? [x.text] : []))
		}
		return Response.json({ inputTokens: inputTokens({ inputTexts: texts, images: 0 }) }, { headers: { 'x-amzn-requestid': crypto.randomUUID() } })
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	// The knobs are the mock's own members, which the handlers read.
	const mock: BedrockMock = {
		url: `http://127.0.0.1:${server.port}`,
		requests,
		fault: undefined,
		faultOnce: undefined,
		lookupDenied: false,
		lookupDelayMs: 0,
		betas: new Set(DOCUMENTED_BETAS),
		get lookups() {
			return requests.filter((r) => r.path.startsWith('/inference-profiles/')).length
		},
		reset() {
			requests.length = 0
			cache.clear()
			mock.fault = mock.faultOnce = undefined
			mock.lookupDenied = false
			mock.lookupDelayMs = 0
			mock.betas = new Set(DOCUMENTED_BETAS)
		},
		async stop() {
			await server.stop(true)
			await inner.stop()
		},
	}
	return mock
}

/**
 * The Anthropic mock's SSE as Bedrock's event stream: one `chunk` message per event, sent as its own write;
 * `message_stop` with the invocation metrics Bedrock adds; Anthropic's `event: error` as an exception message.
 * `scan`: a guardrail scanning the output, in sync or async mode (guardrail.ts `guardOutputEvents`).
 */
function framed(sse: ReadableStream<Uint8Array>, f: BedrockFault | undefined, scan?: { guard: Guard; async: boolean }): ReadableStream<Uint8Array> {
	return new ReadableStream<Uint8Array>({
		async start(ctl) {
			const text = await new Response(sse).text()
			let events: { event: string; data: string }[] = []
			for (const block of text.split('\n\n')) {
				const event = /^event: (.*)$/m.exec(block)?.[1]
				const data = /^data: (.*)$/m.exec(block)?.[1]
				if (event && data) events.push({ event, data })
			}
			if (scan && !events.some((e) => e.event === 'error')) events = guardOutputEvents(events, scan.guard, scan.async)
			let input = 0
			let output = 0
			for (const [i, e] of events.entries()) {
				if (f?.kind === 'exception' && i === f.afterEvents) {
					ctl.enqueue(exceptionMessage(f.type, f.message ?? `${f.type} from the mock`))
					return ctl.close()
				}
				if (e.event === 'error') {
					const said = JSON.parse(e.data) as { error?: { type?: string; message?: string } }
					ctl.enqueue(exceptionMessage(said.error?.type === 'overloaded_error' ? 'serviceUnavailableException' : 'modelStreamErrorException', said.error?.message ?? 'error'))
					return ctl.close()
				}
				let data = e.data
				const parsed = JSON.parse(data) as { message?: { usage?: { input_tokens?: number } }; usage?: { output_tokens?: number } }
				input = parsed.message?.usage?.input_tokens ?? input
				output = parsed.usage?.output_tokens ?? output
				if (e.event === 'message_stop')
					data = JSON.stringify({ ...JSON.parse(data), 'amazon-bedrock-invocationMetrics': { inputTokenCount: input, outputTokenCount: output, invocationLatency: 12, firstByteLatency: 3 } })
				const msg = chunkMessage(data)
				if (f?.kind === 'bad-crc' && i === f.atEvent) msg[msg.length - 1]! ^= 0xff
				ctl.enqueue(msg)
				await Bun.sleep(0)
			}
			ctl.close()
		},
	})
}

/** ConverseStream's events as event-stream messages, one write each; the faults as for InvokeModel streams. */
function converseFramed(events: Array<[string, Record<string, unknown>]>, f: BedrockFault | undefined): ReadableStream<Uint8Array> {
	return new ReadableStream<Uint8Array>({
		async start(ctl) {
			for (const [i, [type, payload]] of events.entries()) {
				if (f?.kind === 'exception' && i === f.afterEvents) {
					ctl.enqueue(exceptionMessage(f.type, f.message ?? `${f.type} from the mock`))
					return ctl.close()
				}
				const msg = converseEvent(type, payload)
				if (f?.kind === 'bad-crc' && i === f.atEvent) msg[msg.length - 1]! ^= 0xff
				ctl.enqueue(msg)
				await Bun.sleep(0)
			}
			ctl.close()
		},
	})
}

export { chunkMessage, converseSignature, exceptionMessage, frameMessage }
/** Bytes of a whole stream, for unit tests of a decoder. */
export const joinFrames = (frames: Uint8Array[]) => Buffer.concat(frames.map((f) => Buffer.from(f)))
