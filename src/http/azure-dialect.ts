/**
 * Clients written for Azure OpenAI (the `AzureOpenAI` classes of the openai SDKs, LangChain's `AzureChatOpenAI`, and
 * tools that only offer an Azure endpoint): they call `{endpoint}/openai/deployments/{deployment}/chat/completions
 * ?api-version=…` with the key in an `api-key` header, or, with Azure's v1 API, `{endpoint}/openai/v1/…`. Pointed at
 * the gateway as their endpoint, each call is served as the same call under `/v1`: the deployment names the model (as
 * Azure takes it, whatever the body says), `api-version` is not needed, and answers and errors are OpenAI's, which is
 * what Azure sends. The key is read from `api-key` on every route (model-auth.ts).
 * @module
 */
import { GatewayError } from '../core/errors'
import { bodyBlob } from './body-spool'
import { readForm } from './form-view'
import { multipartBody } from './multipart'
import { readJsonObject } from './raw-json'

/** The operations Azure serves under a deployment (its data-plane reference), as the gateway's `/v1` paths name them. */
const OPS = ['chat/completions', 'completions', 'embeddings', 'audio/transcriptions', 'audio/translations', 'audio/speech', 'images/generations', 'images/edits']
const DEPLOYMENT_OPS = new RegExp(`^/openai/deployments/([^/]+)/(${OPS.join('|')})/?$`)

/** Azure's paths with no deployment in them: the v1 API (`/openai/v1/…`) and the older unversioned ones (`/openai/models`, `/openai/responses`). */
const OTHER = /^\/openai\/(?:v1\/)?(?!deployments\/)(.+)$/

/** Whether a path is Azure's (the rewrite applies). */
export const isAzurePath = (path: string): boolean => path.startsWith('/openai/')

/**
 * The request as the gateway serves it (`/v1/…`, the deployment as `model`), or the 404 of an Azure path that names
 * no operation the gateway has. The body is read only when a deployment must go into it.
 */
export async function fromAzure(request: Request, path: string): Promise<Request | GatewayError> {
	const url = new URL(request.url)
	url.searchParams.delete('api-version')
	const deployment = DEPLOYMENT_OPS.exec(path)
	if (deployment) {
		url.pathname = `/v1/${deployment[2]}`
		return withModel(request, url, decodeURIComponent(deployment[1]!))
	}
	const other = OTHER.exec(path)
	if (!other) return new GatewayError('not_found', `No route ${request.method} ${path} on this gateway: a deployment serves ${OPS.join(', ')} here`, { code: 'not_found' })
	url.pathname = `/v1/${other[1]}`
	return new Request(url, { method: request.method, headers: request.headers, body: request.body, signal: request.signal, duplex: 'half' } as RequestInit)
}

/** The request at `url` with `model` set to the deployment, in a JSON body or a multipart form (audio, image edits). */
async function withModel(request: Request, url: URL, model: string): Promise<Request | GatewayError> {
	const headers = new Headers(request.headers)
	headers.delete('content-length')
	const type = headers.get('content-type') ?? ''
	if (type.toLowerCase().startsWith('multipart/form-data')) {
		let form: FormData
		try {
			form = await readForm(await bodyBlob(request), type)
		} catch (e) {
			if (e instanceof GatewayError) return e
			return new GatewayError('invalid_request', 'Malformed request body: not valid multipart/form-data', { code: 'invalid_body' })
		}
		form.set('model', model)
		// A new boundary comes with the new body, a stream of the form's parts (no copy of its files).
		const sent = multipartBody(form)
		for (const [k, v] of Object.entries(sent.headers)) headers.set(k, v)
		return new Request(url, { method: request.method, headers, body: sent.body, signal: request.signal, duplex: 'half' } as RequestInit)
	}
	const body = await readJsonObject(request)
	if (body instanceof GatewayError) return body
	headers.set('content-type', 'application/json')
	return new Request(url, { method: request.method, headers, body: JSON.stringify({ ...body, model }), signal: request.signal })
}
