/**
 * Gemini's `v1alpha` API version, served as `v1beta`. Google's guides set `apiVersion: 'v1alpha'` in @google/genai for
 * experimental fields (per-part `mediaResolution` on Gemini 3 was one); v1alpha is a superset of v1beta, and Google
 * now documents those fields on v1beta, where the gateway's Gemini routes and its upstream calls are. Without this a
 * client set so got a bare 404 on every call.
 * @module
 */

const ALPHA = /^(\/upload)?\/v1alpha(?=\/|$)/

/**
 * The v1beta path of a v1alpha one (the model methods, files, uploads, caches, batches, operations), or undefined.
 * @example betaPath('/v1alpha/models/gemini-3-pro:generateContent') === '/v1beta/models/gemini-3-pro:generateContent'
 */
export function betaPath(path: string): string | undefined {
	const m = ALPHA.exec(path)
	return m ? `${m[1] ?? ''}/v1beta${path.slice(m[0].length)}` : undefined
}

/** The request at its v1beta path, its body streamed on as it comes. */
export function asBeta(request: Request, path: string): Request {
	const url = new URL(request.url)
	url.pathname = path
	return new Request(url, { method: request.method, headers: request.headers, body: request.body, signal: request.signal, duplex: 'half' } as RequestInit)
}
