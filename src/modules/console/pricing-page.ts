/**
 * GET /pricing: the public model list rendered on the server as plain HTML, readable without JavaScript and
 * without signing in. On narrow screens the stylesheet turns rows into cards using each cell's data-label.
 * @module
 */
import { usd } from '../../console/lib/format'
import { cacheWrite, cachedInput, otherPrices, showsCacheWrite } from '../../console/lib/prices'
import type { Catalog } from '../../routing/catalog'
import { documentHtml, esc } from './html'
import { pricedModels } from './pricing-data'

const LOGO = `<svg class="logo" width="28" height="28" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8"/><path d="M9 11h14M9 16h9M9 21h14"/></svg>`

const cell = (label: string, html: string, cls = '') => `<td data-label="${esc(label)}"${cls ? ` class="${cls}"` : ''}>${html}</td>`

/** `<details>` opens without JavaScript, so the endpoint list stays one click away on the static page. */
const endpoints = (list: string[]) =>
	`<details class="endpoints"><summary>${list.length} endpoint${list.length === 1 ? '' : 's'}</summary>${list.map((e) => `<div><code class="endpoint">${esc(e)}</code></div>`).join('')}</details>`

export function renderPricingPage(catalog: Catalog, allowUnpriced: boolean): string {
	const models = pricedModels(catalog, allowUnpriced)
	const writes = showsCacheWrite(models)
	const rows = models
		.map((m) => {
			const other = otherPrices(m)
			return `<tr>
<th scope="row" data-label="Model"><code>${esc(m.name)}</code></th>
${cell('Input / 1M tokens', esc(usd(m.input_per_mtok)), 'num')}
${cell('Output / 1M tokens', esc(usd(m.output_per_mtok)), 'num')}
${cell('Cached input / 1M', esc(usd(cachedInput(m))), 'num')}
${writes ? `${cell('Cache write / 1M', esc(usd(cacheWrite(m))), 'num')}\n` : ''}${cell('Other', other.length ? other.map(esc).join('<br>') : '<span class="muted">—</span>')}
${cell('Protocols', `<ul class="chips">${m.protocols.map((p) => `<li class="chip">${esc(p)}</li>`).join('')}</ul>${endpoints(m.endpoints)}`)}
</tr>`
		})
		.join('\n')
	const table = models.length
		? `<div class="table-wrap"><table class="table cards-on-phone">
<caption class="sr-only">Models with their prices in US dollars</caption>
<thead><tr><th scope="col">Model</th><th scope="col" class="num">Input / 1M tokens</th><th scope="col" class="num">Output / 1M tokens</th><th scope="col" class="num">Cached input / 1M</th>${writes ? '<th scope="col" class="num">Cache write / 1M</th>' : ''}<th scope="col">Other</th><th scope="col">Protocols and endpoints</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`
		: '<p class="empty">No models are available yet.</p>'
	const body = `<header class="topbar"><div class="topbar-inner">
<a class="brand" href="/pricing">${LOGO}<span>Switchboard</span></a>
<nav class="topnav" aria-label="Site"><a class="btn btn-primary" href="/console">Sign in</a></nav>
</div></header>
<main class="page page-public" id="main">
<h1>Models and prices</h1>
<p class="lead">Prices in US dollars. Token prices are per million tokens; reasoning tokens count as output. Every chat model answers on each chat endpoint, whatever its vendor.</p>
${table}
</main>`
	return documentHtml({ title: 'Models and prices · Switchboard', body, description: 'Models served by this Switchboard gateway and their prices' })
}
