/** Models: what this gateway serves, at what price, and on which endpoints (the same list as /pricing). */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { DataTable, NumCell } from '../components/data-table'
import { Endpoint, PageHeader, TextField } from '../components/ui'
import { useLoad } from '../hooks'
import { usd } from '../lib/format'
import { cacheWrite, cachedInput, otherPrices, showsCacheWrite } from '../lib/prices'
import type { PricedModel } from '../types'

export function ModelsPage() {
	const list = useLoad(() => api<{ data: PricedModel[] }>('GET', '/api/pricing'), [])
	const [filter, setFilter] = useState('')
	const writes = showsCacheWrite(list.data?.data ?? [])
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
			<DataTable
				loaded={list}
				label="Models and prices"
				columns={[
					'Model',
					{ label: 'Input', num: true },
					{ label: 'Output', num: true },
					{ label: 'Cached input', num: true },
					...(writes ? [{ label: 'Cache write', num: true } as const] : []),
					'Other',
					'Protocols and endpoints',
				]}
				filter={(m) => m.name.toLowerCase().includes(filter.trim().toLowerCase())}
				empty={filter ? 'No model matches.' : 'No models are available yet.'}
				row={(m) => {
					const other = otherPrices(m)
					return (
						<tr key={m.name}>
							<th scope="row" data-label="Model">
								<code>{m.name}</code>
							</th>
							<NumCell label="Input / 1M">{usd(m.input_per_mtok)}</NumCell>
							<NumCell label="Output / 1M">{usd(m.output_per_mtok)}</NumCell>
							<NumCell label="Cached input / 1M">{usd(cachedInput(m))}</NumCell>
							{writes && <NumCell label="Cache write / 1M">{usd(cacheWrite(m))}</NumCell>}
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
											<Endpoint path={e} />
										</div>
									))}
								</details>
							</td>
						</tr>
					)
				}}
			/>
		</>
	)
}
