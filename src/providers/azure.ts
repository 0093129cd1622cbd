/**
 * Azure OpenAI (Azure AI Foundry): OpenAI's wire format at deployment URLs
 * (https://learn.microsoft.com/azure/ai-foundry/openai/reference):
 * `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…` (also `/embeddings`, `/images/generations`,
 * `/audio/speech`, `/audio/transcriptions`, `/completions`), the Responses API at `{endpoint}/openai/responses?api-version=…`,
 * the key in an `api-key` header, or a service principal's Microsoft Entra ID token as a Bearer (azure-entra.ts). The
 * deployment is the channel's upstream model name (model_map renames a public name to it). A `base_url` ending `/openai/v1` is Azure's v1 API (https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle):
 * OpenAI's own paths with the deployment as `model`, and no api-version.
 * @module
 */
import { openaiChat } from '../protocols/openai-chat'
import type { Channel } from '../routing/catalog'
import { type ChatAdapter, channelHeaders, joinUrl } from './adapter'
import { authorizeEntra, reauthorizeEntra, usesEntra } from './azure-entra'
import { completedPromptFilterStream } from './azure-stream'
import { openaiAdapter } from './openai'

/** The `api-version` sent when the channel's `settings.api_version` names none: the first with the Responses API. */
export const AZURE_API_VERSION = '2025-04-01-preview'

const V1_BASE = /\/openai\/v1\/?$/i

/** The resource endpoint: `base_url` less a trailing `/openai` (both forms are in Microsoft's examples). */
const endpointOf = (ch: Channel) => ch.baseUrl.replace(/\/+$/, '').replace(/\/openai$/i, '')

function apiVersion(ch: Channel): string {
	const v = ch.settings.api_version
	return `api-version=${encodeURIComponent(typeof v === 'string' && v ? v : AZURE_API_VERSION)}`
}

/**
 * URL of an OpenAI operation (`/chat/completions`, `/embeddings`, `/audio/speech`…) on an Azure channel's deployment.
 * @example azureUrl(ch, 'gpt-4o-prod', '/embeddings') // '{endpoint}/openai/deployments/gpt-4o-prod/embeddings?api-version=2025-04-01-preview'
 */
export function azureUrl(ch: Channel, deployment: string, path: string): string {
	if (V1_BASE.test(ch.baseUrl)) return joinUrl(ch.baseUrl, path)
	return `${endpointOf(ch)}/openai/deployments/${encodeURIComponent(deployment)}${path}?${apiVersion(ch)}`
}

/** The Responses API, which takes the deployment as `model` (not in the path). */
export const azureResponsesUrl = (ch: Channel): string => (V1_BASE.test(ch.baseUrl) ? joinUrl(ch.baseUrl, '/responses') : `${endpointOf(ch)}/openai/responses?${apiVersion(ch)}`)

/**
 * Azure's key header, for a resource key; none for a service principal, whose Entra ID token `authorize` adds
 * (azure-entra.ts): every call to an Azure channel goes with `azureCredentials`.
 */
export const azureAuth = (ch: Channel): Record<string, string> => (usesEntra(ch) ? channelHeaders(ch) : { ...channelHeaders(ch), 'api-key': ch.apiKey })

/** The hooks that set an Azure call's Entra ID token (azure-entra.ts), for the calls that are not chat as for chat. */
export const azureCredentials: Pick<ChatAdapter, 'authorize' | 'reauthorize'> = { authorize: authorizeEntra, reauthorize: reauthorizeEntra }

export const azureAdapter: ChatAdapter = {
	protocol: openaiChat,
	chatUrl: (ch, model) => azureUrl(ch, model, '/chat/completions'),
	responsesUrl: azureResponsesUrl,
	headers: (ch) => ({ 'content-type': 'application/json', ...azureAuth(ch) }),
	upstreamOptions: openaiAdapter.upstreamOptions,
	...azureCredentials,
	answer(res) {
		if (!res.ok || !res.body || !res.headers.get('content-type')?.includes('text/event-stream')) return res
		const headers = new Headers(res.headers)
		headers.delete('content-length')
		return new Response(completedPromptFilterStream(res.body), { status: res.status, statusText: res.statusText, headers })
	},
}
