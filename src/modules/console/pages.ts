/**
 * Pages and assets: `/` → `/console`; `/console` and every path below it get the single-page app's shell (the app
 * routes on the client); `/console/assets/app-<hash>.js|css` are the bundled assets, cached for a year because
 * the hash changes with the content; `/pricing` is rendered on the server.
 * @module
 */
import { Elysia, t } from 'elysia'
import { consoleCss, consoleCssHash, consoleJs, consoleJsHash } from '../../console/assets.gen'
import type { Services } from '../../services'
import { documentHtml, htmlResponse } from './html'
import { renderPricingPage } from './pricing-page'

type Asset = { body: string; gzip?: Uint8Array<ArrayBuffer>; type: string; hash: string }

const ASSETS: Record<string, Asset> = {
	js: { body: consoleJs, type: 'text/javascript; charset=utf-8', hash: consoleJsHash },
	css: { body: consoleCss, type: 'text/css; charset=utf-8', hash: consoleCssHash },
}

const SHELL = documentHtml({
	title: 'Switchboard console',
	script: true,
	body: '<div id="app"><noscript><p class="noscript">The console needs JavaScript. The price list is at <a href="/pricing">/pricing</a>.</p></noscript></div>',
})

function serveAsset(file: string, request: Request): Response {
	const m = /^app-([0-9a-f]{12})\.(js|css)$/.exec(file)
	const asset = m ? ASSETS[m[2]!] : undefined
	if (!m || !asset) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain' } })
	// A page from an older deployment may ask for an older hash: answer with the current file, but do not let
	// caches keep it under the old name.
	const cache = m[1] === asset.hash ? 'public, max-age=31536000, immutable' : 'no-cache'
	const headers: Record<string, string> = { 'content-type': asset.type, 'cache-control': cache, vary: 'accept-encoding', 'x-content-type-options': 'nosniff' }
	if (/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) {
		asset.gzip ??= Bun.gzipSync(new TextEncoder().encode(asset.body))
		return new Response(asset.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } })
	}
	return new Response(asset.body, { headers })
}

export function pageRoutes(svc: Services) {
	const hidden = { detail: { hide: true } }
	return new Elysia()
		.get('/', ({ redirect }) => redirect('/console', 302), hidden)
		.get('/console', () => htmlResponse(SHELL), hidden)
		.get('/console/*', () => htmlResponse(SHELL), hidden)
		.get('/console/assets/:file', ({ params, request }) => serveAsset(params.file, request), { ...hidden, params: t.Object({ file: t.String() }) })
		.get('/pricing', () => htmlResponse(renderPricingPage(svc.catalog, svc.env.allowUnpriced)), hidden)
}
