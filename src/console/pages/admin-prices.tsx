/** Administration → Prices: the model price list (USD per million tokens and per unit), add, edit, disable. */
import { useState } from 'preact/hooks'
import { api, messageOf } from '../api'
import { EditIcon, PlusIcon } from '../components/icons'
import { Modal } from '../components/modal'
import { Alert, Badge, Button, Empty, IconButton, Loading, PageHeader, TextArea, TextField, statusTone } from '../components/ui'
import { useLoad } from '../hooks'
import { usd } from '../lib/format'
import { parsePairs, parseUsd } from '../lib/input'
import { otherPrices } from '../lib/prices'
import { useSession } from '../session'
import type { ModelPrice } from '../types'

const str = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v))

function PriceModal({ model, onClose, onSaved }: { model?: ModelPrice; onClose: () => void; onSaved: () => void }) {
	const [name, setName] = useState(model?.name ?? '')
	const [input, setInput] = useState(str(model?.input_per_mtok))
	const [output, setOutput] = useState(str(model?.output_per_mtok))
	const [cacheRead, setCacheRead] = useState(str(model?.cache_read_per_mtok))
	const [cacheWrite, setCacheWrite] = useState(str(model?.cache_write_per_mtok))
	const [perRequest, setPerRequest] = useState(str(model?.per_request))
	const [maxOut, setMaxOut] = useState(str(model?.max_output_tokens))
	const [units, setUnits] = useState(
		Object.entries(model?.prices ?? {})
			.map(([k, v]) => `${k} = ${v}`)
			.join('\n'),
	)
	const [error, setError] = useState<string>()
	const [busy, setBusy] = useState(false)

	const submit = async (e: Event) => {
		e.preventDefault()
		setError(undefined)
		try {
			const body: Record<string, unknown> = { name: name.trim() }
			const money: Array<[string, string]> = [
				['input_per_mtok', input],
				['output_per_mtok', output],
				['cache_read_per_mtok', cacheRead],
				['cache_write_per_mtok', cacheWrite],
				['per_request', perRequest],
			]
			for (const [k, v] of money) if (v.trim()) body[k] = parseUsd(v)
			if (maxOut.trim()) {
				if (!/^\d+$/.test(maxOut.trim()) || Number(maxOut) < 1) throw new Error('Max output tokens must be a whole number above 0')
				body.max_output_tokens = Number(maxOut)
			}
			for (const [k, v] of Object.entries(parsePairs(units, 'Unit prices'))) {
				if (!k.startsWith('per_')) throw new Error(`Unit prices: "${k}" must start with per_, e.g. per_image`)
				body[k] = parseUsd(v)
			}
			setBusy(true)
			await api(model ? 'PATCH' : 'POST', model ? `/api/models/${model.id}` : '/api/models', body)
			onSaved()
		} catch (err) {
			setError(messageOf(err))
			setBusy(false)
		}
	}
	return (
		<Modal title={model ? `Edit price of ${model.name}` : 'Add a model price'} onClose={onClose} wide>
			<form onSubmit={submit}>
				<div class="modal-body stack">
					{error && <Alert>{error}</Alert>}
					<TextField label="Model name" value={name} onValue={setName} required autoFocus placeholder="gpt-4o-mini" />
					<div class="grid-2">
						<TextField label="Input (USD / 1M tokens)" value={input} onValue={setInput} inputMode="decimal" placeholder="0" />
						<TextField label="Output (USD / 1M tokens)" value={output} onValue={setOutput} inputMode="decimal" placeholder="0" />
						<TextField label="Cache read (USD / 1M tokens)" value={cacheRead} onValue={setCacheRead} inputMode="decimal" placeholder="Same as input" />
						<TextField label="Cache write (USD / 1M tokens)" value={cacheWrite} onValue={setCacheWrite} inputMode="decimal" placeholder="Same as input" />
						<TextField label="Per request (USD)" value={perRequest} onValue={setPerRequest} inputMode="decimal" placeholder="None" />
						<TextField label="Max output tokens" value={maxOut} onValue={setMaxOut} inputMode="numeric" placeholder="Model default" />
					</div>
					<TextArea label="Unit prices" value={units} onValue={setUnits} rows={3} hint="Optional, USD per unit: per_image = 0.04, per_minute = 0.006 …" />
				</div>
				<div class="modal-foot">
					<Button onClick={onClose}>Cancel</Button>
					<Button type="submit" variant="primary" busy={busy}>
						{model ? 'Save' : 'Add price'}
					</Button>
				</div>
			</form>
		</Modal>
	)
}

export function AdminPrices() {
	const { toast } = useSession()
	const list = useLoad(() => api<{ data: ModelPrice[] }>('GET', '/api/models'), [])
	const [editing, setEditing] = useState<ModelPrice | 'new'>()
	const [error, setError] = useState<string>()
	const setEnabled = async (m: ModelPrice, enabled: boolean) => {
		setError(undefined)
		try {
			await api('PATCH', `/api/models/${m.id}`, { enabled })
			toast(`${enabled ? 'Enabled' : 'Disabled'} ${m.name}`)
			list.reload()
		} catch (e) {
			setError(messageOf(e))
		}
	}
	return (
		<>
			<PageHeader
				title="Prices"
				subtitle="What each model costs the accounts that use it."
				actions={
					<Button variant="primary" onClick={() => setEditing('new')}>
						<PlusIcon /> Add price
					</Button>
				}
			/>
			{list.error && <Alert>{list.error}</Alert>}
			{error && <Alert>{error}</Alert>}
			{list.loading && !list.data ? (
				<Loading />
			) : !list.data?.data.length ? (
				<Empty>No prices yet.</Empty>
			) : (
				<div class="card table-wrap">
					<table class="table cards-on-phone" aria-label="Model prices">
						<thead>
							<tr>
								<th scope="col">Model</th>
								<th scope="col" class="num">Input / 1M</th>
								<th scope="col" class="num">Output / 1M</th>
								<th scope="col" class="num">Cache read / write</th>
								<th scope="col">Other</th>
								<th scope="col">Status</th>
								<th scope="col">
									<span class="sr-only">Actions</span>
								</th>
							</tr>
						</thead>
						<tbody>
							{list.data.data.map((m) => (
								<tr key={m.id} data-model={m.name}>
									<th scope="row" data-label="Model">
										<code>{m.name}</code>
										{m.source === 'config' && <div class="muted small">from GATEWAY_CONFIG</div>}
									</th>
									<td data-label="Input / 1M" class="num">
										{usd(m.input_per_mtok)}
									</td>
									<td data-label="Output / 1M" class="num">
										{usd(m.output_per_mtok)}
									</td>
									<td data-label="Cache read / write" class="num">
										{usd(m.cache_read_per_mtok ?? m.input_per_mtok)} / {usd(m.cache_write_per_mtok ?? m.input_per_mtok)}
									</td>
									<td data-label="Other">{otherPrices(m).join(', ') || <span class="muted">—</span>}</td>
									<td data-label="Status">
										<Badge tone={statusTone(m.status)}>{m.status}</Badge>
									</td>
									<td class="actions">
										<Button class="btn-sm" onClick={() => setEnabled(m, m.status !== 'enabled')} aria-label={`${m.status === 'enabled' ? 'Disable' : 'Enable'} ${m.name}`}>
											{m.status === 'enabled' ? 'Disable' : 'Enable'}
										</Button>
										<IconButton label={`Edit ${m.name}`} onClick={() => setEditing(m)}>
											<EditIcon />
										</IconButton>
									</td>
								</tr>
							))}
						</tbody>
					</table>
				</div>
			)}
			{editing && (
				<PriceModal
					model={editing === 'new' ? undefined : editing}
					onClose={() => setEditing(undefined)}
					onSaved={() => {
						setEditing(undefined)
						toast('Price saved')
						list.reload()
					}}
				/>
			)}
		</>
	)
}
