/** Models: what this gateway serves, at what price, and on which endpoints (the same list as /pricing). */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { Alert, Empty, Loading, PageHeader, TextField } from '../components/ui'
import { useLoad } from '../hooks'
import { usd } from '../lib/format'
import { cachedInput, otherPrices } from '../lib/prices'
import type { PricedModel } from '../types'

export function ModelsPage() {
	const list = useLoad(() => api<{ data: PricedModel[] }>('GET', '/api/pricing'), [])
	const [filter, setFilter] = useState('')
	const shown = (list.data?.data ?? []).filter((m) => m.name.toLowerCase().includes(filter.trim().toLowerCase()))
	return (
		<>
			<PageHeader
				title="Models"
				subtitle={
					<>
						Prices in USD per million tokens. Also public at <a href="/pricing">/pricing</a>.
					</>
				}
			/>
			<div class="toolbar">
				<TextField label="Search models" value={filter} onValue={setFilter} type="search" placeholder="e.g. gpt, claude, gemini" />
			</div>
			{list.error && <Alert>{list.error}</Alert>}
			{list.loading && !list.data ? (
				<Loading />
			) : shown.length === 0 ? (
				<Empty>{filter ? 'No model matches.' : 'No models are available yet.'}</Empty>
			) : (
				<div class="card table-wrap">
					<table class="table cards-on-phone" aria-label="Models and prices">
						<thead>
							<tr>
								<th scope="col">Model</th>
								<th scope="col" class="num">Input</th>
								<th scope="col" class="num">Output</th>
								<th scope="col" class="num">Cached input</th>
								<th scope="col">Other</th>
								<th scope="col">Protocols and endpoints</th>
							</tr>
						</thead>
						<tbody>
							{shown.map((m) => {
								const other = otherPrices(m)
								return (
									<tr key={m.name}>
										<th scope="row" data-label="Model">
											<code>{m.name}</code>
										</th>
										<td data-label="Input / 1M" class="num">
											{usd(m.input_per_mtok)}
										</td>
										<td data-label="Output / 1M" class="num">
											{usd(m.output_per_mtok)}
										</td>
										<td data-label="Cached input / 1M" class="num">
											{usd(cachedInput(m))}
										</td>
										<td data-label="Other">{other.length ? other.map((o) => <div key={o}>{o}</div>) : <span class="muted">—</span>}</td>
										<td data-label="Protocols">
											<ul class="chips">
												{m.protocols.map((p) => (
													<li key={p} class="chip">
														{p}
													</li>
												))}
											</ul>
											<details class="endpoints">
												<summary>{m.endpoints.length} endpoint{m.endpoints.length === 1 ? '' : 's'}</summary>
												{m.endpoints.map((e) => (
													<div key={e}>
														<code class="endpoint">{e}</code>
													</div>
												))}
											</details>
										</td>
									</tr>
								)
							})}
						</tbody>
					</table>
				</div>
			)}
		</>
	)
}
