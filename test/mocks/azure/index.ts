/**
 * Mock Azure OpenAI resource (https://learn.microsoft.com/azure/ai-foundry/openai/reference): OpenAI's formats at
 * deployment URLs `/openai/deployments/{deployment}/…?api-version=…` and `/openai/responses?api-version=…`, the key in
 * an `api-key` header or a Microsoft Entra ID token as a Bearer (from the mock authority, entra.ts); and the v1 API under `/openai/v1/…` (deployment as `model`, no api-version, the key as `api-key`
 * or Bearer). Answers come from the OpenAI mock's handlers, with Azure's content filter annotations added
 * (https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter): a stream's first chunk has
 * `choices: []` and `prompt_filter_results`, every choice carries `content_filter_results`. A prompt containing
 * `AZURE_FILTERED_PROMPT` is refused 400 `content_filter` with `innererror`; an answer to `AZURE_FILTERED_ANSWER` ends
 * with `finish_reason: "content_filter"`.
 * @module
 */

import { chatCompletions } from '../openai/chat'
import { completions } from '../openai/completions'
import { embeddings } from '../openai/embeddings'
import { openaiStatusBody } from '../openai/errors'
import { imageGenerations, speech, transcriptions } from '../openai/media'
import { responses } from '../openai/responses'
import { storedResponseRoute, storeOf } from '../openai/responses-store'
import { frame, json, type JsonReply, type Reply } from '../shared/reply'
import { startMockServer, type MockRequest } from '../shared/server'
import type { MockOptions, VendorMock } from '../shared/types'
import type { EntraMock } from './entra'

export const FILTERED_PROMPT = 'AZURE_FILTERED_PROMPT'
export const FILTERED_ANSWER = 'AZURE_FILTERED_ANSWER'

/**
 * `deployments`: deployment name → the model it runs (what the OpenAI handlers answer as). `entra`: the authority
 * whose tokens the resource takes as `Authorization: Bearer …` (entra.ts); `keyAuth: false`: key auth is disabled
 * (`disableLocalAuth`), so an `api-key` is refused 403 `AuthenticationTypeDisabled`.
 */
export type AzureMockOptions = MockOptions & { deployments: Record<string, string>; entra?: Pick<EntraMock, 'accepts'>; keyAuth?: boolean }

const SAFE = { filtered: false, severity: 'safe' }
const FILTERS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE }
const PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: FILTERS }]

const azureError = (status: number, code: string, message: string): JsonReply => json({ error: { code, message } }, status)

const PROMPT_REFUSAL = {
	error: {
		message:
			"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
		type: null,
		param: 'prompt',
		code: 'content_filter',
		status: 400,
		innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { ...FILTERS, violence: { filtered: true, severity: 'high' } } },
	},
}

type Obj = Record<string, unknown>

/** Azure's annotations on one chunk or completion; `filterStop` turns a `stop` into Azure's `content_filter`. */
function annotate(c: Obj, filterStop: boolean): Obj {
	const choices = Array.isArray(c.choices) ? (c.choices as Obj[]) : []
	return {
		...c,
		choices: choices.map((ch) => {
			const stop = filterStop && ch.finish_reason === 'stop'
			const results = stop ? { ...FILTERS, violence: { filtered: true, severity: 'medium' } } : FILTERS
			return { ...ch, ...(stop && { finish_reason: 'content_filter' }), content_filter_results: results }
		}),
	}
}

/** Chat completions as Azure answers them: filter results everywhere, the prompt's in a first chunk of no choices. */
function chat(body: Obj, jsonError: boolean): Reply {
	const text = JSON.stringify(body.messages ?? '')
	if (text.includes(FILTERED_PROMPT)) return json(PROMPT_REFUSAL, 400)
	const filterStop = text.includes(FILTERED_ANSWER)
	const reply = chatCompletions(body, jsonError, undefined)
	if (reply.type === 'json') {
		if (reply.status !== 200) return reply
		return { ...reply, body: { ...annotate(reply.body as Obj, filterStop), prompt_filter_results: PROMPT_FILTER } }
	}
	if (reply.type !== 'stream') return reply
	const chunks = reply.chunks.map((c) => {
		const s = String(c)
		if (!s.startsWith('data: {')) return s
		const parsed = JSON.parse(s.slice('data: '.length)) as Obj
		return Array.isArray(parsed.choices) && parsed.choices.length ? frame(annotate(parsed, filterStop)) : s
	})
	const first = frame({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER })
	return { ...reply, chunks: [first, ...chunks] }
}

function operation(req: MockRequest, op: string, body: Obj): Reply | Promise<Reply> {
	const { jsonError } = req
	switch (op) {
		case '/chat/completions':
			return chat(body, jsonError)
		case '/completions':
			return completions(body, jsonError, undefined)
		case '/embeddings':
			return embeddings(body, jsonError, undefined)
		case '/images/generations':
			return imageGenerations(body, jsonError, req.origin)
		case '/audio/speech':
			return speech(body, jsonError)
		case '/audio/transcriptions':
			return transcriptions(req.form)
	}
	return azureError(404, '404', 'Resource not found')
}

function responsesCall(req: MockRequest, opts: AzureMockOptions, rest: string): Reply {
	const body = (req.body ?? {}) as Obj
	if (req.method === 'POST' && rest === '') {
		const model = opts.deployments[String(body.model)]
		if (!model) return azureError(404, 'DeploymentNotFound', `The API deployment for this resource does not exist.`)
		if (JSON.stringify(body.input ?? '').includes(FILTERED_PROMPT)) return json(PROMPT_REFUSAL, 400)
		return responses({ ...body, model }, req.jsonError, undefined, storeOf(opts))
	}
	return storedResponseRoute(storeOf(opts), req.method, `/v1/responses${rest}`, req.query, req.body) ?? azureError(404, '404', 'Resource not found')
}

/**
 * Why the call's credentials are refused, or undefined when they are good. Keys go in `api-key`; the v1 API also takes
 * one as a Bearer token, as the OpenAI client sends it; an Entra ID token goes as a Bearer anywhere
 * (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/managed-identity).
 */
function refusedCredentials(headers: Headers, opts: AzureMockOptions, v1: boolean): JsonReply | undefined {
	const key = headers.get('api-key')
	const auth = headers.get('authorization')
	const bearer = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined
	if (key !== null && opts.keyAuth === false) return azureError(403, 'AuthenticationTypeDisabled', 'Key based authentication is disabled for this resource.')
	if (key === opts.apiKey || (v1 && bearer === opts.apiKey)) return undefined
	if (bearer !== undefined && opts.entra?.accepts(bearer)) return undefined
	if (bearer !== undefined && key === null)
		return azureError(401, '401', 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.')
	return azureError(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.')
}

function route(req: MockRequest, opts: AzureMockOptions): Reply | Promise<Reply> {
	const { path, headers } = req
	const v1 = path.startsWith('/openai/v1/')
	const refused = refusedCredentials(headers, opts, v1)
	if (refused) return refused
	if (v1) {
		const op = path.slice('/openai/v1'.length)
		if (op.startsWith('/responses')) return responsesCall(req, opts, op.slice('/responses'.length))
		const body = (req.body ?? {}) as Obj
		const model = opts.deployments[String(body.model ?? req.form?.get('model'))]
		if (!model) return azureError(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.')
		return operation(req, op, { ...body, model })
	}
	if (!req.query['api-version']) return azureError(404, '404', 'Resource not found')
	if (path.startsWith('/openai/responses')) return responsesCall(req, opts, path.slice('/openai/responses'.length))
	const m = /^\/openai\/deployments\/([^/]+)(\/.*)$/.exec(path)
	if (!m || req.method !== 'POST') return azureError(404, '404', 'Resource not found')
	const model = opts.deployments[decodeURIComponent(m[1]!)]
	if (!model) return azureError(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.')
	// The deployment decides the model; a `model` in the body is ignored.
	return operation(req, m[2]!, { ...((req.body ?? {}) as Obj), model })
}

/**
 * Starts a mock Azure OpenAI resource; `url` is its endpoint (`http://127.0.0.1:PORT`).
 * @example const m = await startAzureMock({ apiKey: 'az-key', deployments: { 'prod-4o': 'gpt-4o' } })
 */
export function startAzureMock(opts: AzureMockOptions): VendorMock {
	return startMockServer(
		{
			basePath: '',
			handle: (req) => route(req, opts),
			statusBody: openaiStatusBody,
			streamError: (_req, _seq, status = 500) => ({ frame: frame({ error: (openaiStatusBody(status) as { error: unknown }).error }), status }),
		},
		opts,
	)
}
