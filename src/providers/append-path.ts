/**
 * `suffix` added to a URL's path, before its query, and `search` (a client's `?…`) merged into that query: a channel's
 * Responses URL may carry one (Azure's `?api-version=…`), and `/{id}`, `/compact` or `/input_tokens` go before it.
 * @example appendPath('https://r.openai.azure.com/openai/responses?api-version=v', '/resp_1', '?include=x') // '…/openai/responses/resp_1?api-version=v&include=x'
 */
export function appendPath(url: string, suffix: string, search = ''): string {
	const q = url.indexOf('?')
	const path = q < 0 ? url : url.slice(0, q)
	const query = [q < 0 ? '' : url.slice(q + 1), search.replace(/^\?/, '')].filter(Boolean).join('&')
	return `${path}${suffix}${query ? `?${query}` : ''}`
}
