/** Administration → Prices: the model price list (USD per million tokens and per unit), add, edit, disable. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { AddButton, EditButton, EnableButton } from '../components/actions'
import { DataTable, NumCell } from '../components/data-table'
import { FormModal } from '../components/modal'
import { Alert, Badge, PageHeader, TextArea, TextField, statusTone } from '../components/ui'
import { useAction, useDialogs, useLoad } from '../hooks'
import { isolated, usd } from '../lib/format'
import { formatPairs } from '../lib/input'
import { priceBody, priceError } from '../lib/price-form'
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
	const [context, setContext] = useState(str(model?.context_window))
	const [units, setUnits] = useState(formatPairs(model?.prices))

	const save = async () => {
		const form = { name, input, output, cacheRead, cacheWrite, perRequest, maxOut, context, units }
		const body = priceBody(form, model)
		try {
			await api(model ? 'PATCH' : 'POST', model ? `/api/models/${model.id}` : '/api/models', body)
		} catch (e) {
			throw new Error(priceError(e, form))
		}
		onSaved()
	}
	return (
		<FormModal title={model ? `Edit price of ${model.name}` : 'Add a model price'} submitLabel={model ? 'Save' : 'Add price'} onSubmit={save} onClose={onClose} wide>
			{/* As the channel form says of a channel from the file (config-apply.ts upserts the file's prices at every start). */}
			{model?.source === 'config' && <Alert kind="info">This price comes from GATEWAY_CONFIG: the file's values are applied again at the next start. Change the file to keep a change.</Alert>}
			<TextField label="Model name" value={name} onValue={setName} required autoFocus placeholder="gpt-4o-mini" />
			<div class="grid-2">
				<TextField label="Input (USD / 1M tokens)" value={input} onValue={setInput} inputMode="decimal" placeholder="0" />
				<TextField label="Output (USD / 1M tokens)" value={output} onValue={setOutput} inputMode="decimal" placeholder="0" />
				<TextField label="Cache read (USD / 1M tokens)" value={cacheRead} onValue={setCacheRead} inputMode="decimal" placeholder="Same as input" />
				<TextField label="Cache write (USD / 1M tokens)" value={cacheWrite} onValue={setCacheWrite} inputMode="decimal" placeholder="Same as input" />
				<TextField label="Per request (USD)" value={perRequest} onValue={setPerRequest} inputMode="decimal" placeholder="None" />
				<TextField label="Max output tokens" value={maxOut} onValue={setMaxOut} inputMode="numeric" placeholder="Vendor's, when known" />
				<TextField label="Context window (tokens)" value={context} onValue={setContext} inputMode="numeric" placeholder="Vendor's, when known" />
			</div>
			<TextArea label="Unit prices" value={units} onValue={setUnits} rows={3} hint="Optional, USD per unit: per_image = 0.04, per_minute = 0.006 …, or per 1M tokens of a kind priced apart: audio_input_per_mtok, audio_cache_read_per_mtok, audio_output_per_mtok, image_input_per_mtok, image_output_per_mtok, cache_write_1h_per_mtok, cache_write_12h_per_mtok, input_above_200k_per_mtok, output_above_200k_per_mtok, input_above_272k_per_mtok, output_above_272k_per_mtok, priority_input_per_mtok, priority_output_per_mtok (OpenAI Fast mode), flex_input_per_mtok, flex_output_per_mtok, ultrafast_input_per_mtok, ultrafast_output_per_mtok, fast_input_per_mtok, fast_output_per_mtok (Anthropic fast mode), batch_input_per_mtok, batch_output_per_mtok; or us_inference_multiplier = 1.1, a factor on every token price of a Claude request run in the US. Delete a line (or empty a field above) to remove that price." />
		</FormModal>
	)
}

export function AdminPrices() {
	const { toast } = useSession()
	const list = useLoad(() => api<{ data: ModelPrice[] }>('GET', '/api/models'), [])
	const dialog = useDialogs<ModelPrice | 'new'>(list.reload)
	const toggle = useAction()
	const setEnabled = (m: ModelPrice, enabled: boolean) =>
		toggle.run(async () => {
			await api('PATCH', `/api/models/${m.id}`, { enabled })
			toast(`${enabled ? 'Enabled' : 'Disabled'} ${isolated(m.name)}`)
			list.reload()
		})
	return (
		<>
			<PageHeader title="Prices" subtitle="What each model costs the accounts that use it." actions={<AddButton label="Add price" onClick={() => dialog.show('new')} />} />
			<DataTable
				loaded={list}
				label="Model prices"
				columns={['Model', { label: 'Input / 1M', num: true }, { label: 'Output / 1M', num: true }, { label: 'Cache read / write', num: true }, 'Other', 'Status']}
				actions
				errors={[toggle.error]}
				empty="No prices yet."
				row={(m) => (
					<tr key={m.id} data-model={m.name}>
						<th scope="row" data-label="Model">
							<code>{m.name}</code>
							{m.source === 'config' && <div class="muted small">from GATEWAY_CONFIG</div>}
						</th>
						<NumCell label="Input / 1M">{usd(m.input_per_mtok)}</NumCell>
						<NumCell label="Output / 1M">{usd(m.output_per_mtok)}</NumCell>
						<NumCell label="Cache read / write">{usd(m.cache_read_per_mtok ?? m.input_per_mtok)} / {usd(m.cache_write_per_mtok ?? m.input_per_mtok)}</NumCell>
						<td data-label="Other">{otherPrices(m).join(', ') || <span class="muted">—</span>}</td>
						<td data-label="Status">
							<Badge tone={statusTone(m.status)}>{m.status}</Badge>
						</td>
						<td class="actions">
							<EnableButton name={m.name} enabled={m.status === 'enabled'} onToggle={(on) => setEnabled(m, on)} />
							<EditButton name={m.name} onClick={() => dialog.show(m)} />
						</td>
					</tr>
				)}
			/>
			{dialog.open && <PriceModal model={dialog.open === 'new' ? undefined : dialog.open} onClose={dialog.close} onSaved={() => dialog.done('Price saved')} />}
		</>
	)
}
