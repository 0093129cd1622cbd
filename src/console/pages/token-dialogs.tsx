/** Create, show-once-created, edit and delete dialogs of the Tokens page. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { CopyButton } from '../components/copy-button'
import { ConfirmModal, FormModal, Modal } from '../components/modal'
import { Alert, Button, CheckField, SelectField, TextField } from '../components/ui'
import { EXPIRY_OPTIONS, type ExpiryChoice, expiryToIso, localDate } from '../lib/expiry'
import { parseLimit, parseModelList, parsePerMinute } from '../lib/input'
import { dateTime } from '../lib/format'
import type { Token } from '../types'

type ExpiryValue = ExpiryChoice | 'keep'

const RPM = 'Requests per minute'
const TPM = 'Tokens per minute'

/**
 * The key's rate limits and allowed models, as the management API takes them: a key answering 429 or 403
 * model_not_allowed is explained (and fixed) here, not only through the API.
 */
function AccessFields({ rpm, setRpm, tpm, setTpm, models, setModels }: { rpm: string; setRpm: (v: string) => void; tpm: string; setTpm: (v: string) => void; models: string; setModels: (v: string) => void }) {
	return (
		<>
			<div class="grid-2">
				<TextField label={RPM} value={rpm} onValue={setRpm} inputMode="numeric" placeholder="No limit" hint="Optional. Calls past it are refused (429)." />
				<TextField label={TPM} value={tpm} onValue={setTpm} inputMode="numeric" placeholder="No limit" hint="Optional. Input and output tokens, refused likewise." />
			</div>
			<TextField
				label="Allowed models"
				value={models}
				onValue={setModels}
				autoComplete="off"
				spellcheck={false}
				placeholder="All models"
				hint="Optional. Names separated by commas; * matches any characters, as in gpt-4o*. Other models are refused (403)."
			/>
		</>
	)
}

const perMinute = (n: number | null) => (n === null ? '' : String(n))

/** The name field, trimmed: only spaces pass the browser's `required` but are no name (the server refuses it). */
function keyName(text: string): string {
	const name = text.trim()
	if (!name) throw new Error('Enter a name for the key')
	return name
}

function ExpiryFields({ choice, setChoice, date, setDate, current }: { choice: ExpiryValue; setChoice: (c: ExpiryValue) => void; date: string; setDate: (d: string) => void; current?: string | null }) {
	const options: Array<{ value: ExpiryValue; label: string }> = current !== undefined ? [{ value: 'keep', label: `Keep: ${current ? dateTime(current) : 'never'}` }, ...EXPIRY_OPTIONS] : EXPIRY_OPTIONS
	return (
		<>
			<SelectField label="Expires" value={choice} onValue={setChoice} options={options} />
			{choice === 'date' && <TextField label="Expiry date" type="date" value={date} onValue={setDate} min={localDate(new Date())} required hint="The key works until the end of this day." />}
		</>
	)
}

export function CreateTokenModal({ accountId, onClose, onCreated }: { accountId: number; onClose: () => void; onCreated: (t: Token, key: string) => void }) {
	const [name, setName] = useState('')
	const [choice, setChoice] = useState<ExpiryValue>('never')
	const [date, setDate] = useState('')
	const [limit, setLimit] = useState('')
	const [rpm, setRpm] = useState('')
	const [tpm, setTpm] = useState('')
	const [models, setModels] = useState('')
	const save = async () => {
		const body = {
			account_id: accountId,
			name: keyName(name),
			expires_at: expiryToIso(choice as ExpiryChoice, date),
			spend_limit: parseLimit(limit),
			rpm_limit: parsePerMinute(rpm, RPM),
			tpm_limit: parsePerMinute(tpm, TPM),
			allowed_models: parseModelList(models),
		}
		const created = await api<Token & { key: string }>('POST', '/api/tokens', body)
		onCreated(created, created.key)
	}
	return (
		<FormModal title="Create token" submitLabel="Create token" onSubmit={save} onClose={onClose}>
			<TextField label="Name" value={name} onValue={setName} required maxLength={200} placeholder="e.g. laptop, ci, my-app" autoFocus />
			<ExpiryFields choice={choice} setChoice={setChoice} date={date} setDate={setDate} />
			<TextField label="Spend limit (USD)" value={limit} onValue={setLimit} inputMode="decimal" placeholder="No limit" hint="Optional. Requests are refused once this key has spent this much." />
			<AccessFields rpm={rpm} setRpm={setRpm} tpm={tpm} setTpm={setTpm} models={models} setModels={setModels} />
		</FormModal>
	)
}

/** Shown right after creation: the full key, with Copy key. */
export function CreatedTokenModal({ token, secret, onClose }: { token: Token; secret: string; onClose: () => void }) {
	return (
		<Modal title="Token created" onClose={onClose}>
			<div class="modal-body stack">
				<p>
					Your new key <strong><bdi>{token.name}</bdi></strong> is ready. Use it as <code>Authorization: Bearer …</code>.
				</p>
				<div class="key-box">
					{/* autofocus: showModal would focus the first control, the × Close button, instead of the key. */}
					<input class="mono" readOnly value={secret} aria-label="New key" data-testid="new-key" autoFocus onFocus={(e) => e.currentTarget.select()} />
					<CopyButton text={secret} />
				</div>
				<Alert kind="info">You can reveal this key again at any time from the list with the eye icon.</Alert>
			</div>
			<div class="modal-foot">
				<Button variant="primary" onClick={onClose}>
					Done
				</Button>
			</div>
		</Modal>
	)
}

export function EditTokenModal({ token, onClose, onSaved }: { token: Token; onClose: () => void; onSaved: () => void }) {
	const [name, setName] = useState(token.name)
	const [choice, setChoice] = useState<ExpiryValue>('keep')
	const [date, setDate] = useState('')
	const [limit, setLimit] = useState(token.spend_limit === null ? '' : String(token.spend_limit))
	const [rpm, setRpm] = useState(perMinute(token.rpm_limit))
	const [tpm, setTpm] = useState(perMinute(token.tpm_limit))
	// Compared as typed: an untouched field sends nothing, so a key the API gave an empty list (no model at all) is
	// not opened to every model by a rename.
	const [shownModels] = useState((token.allowed_models ?? []).join(', '))
	const [models, setModels] = useState(shownModels)
	const [enabled, setEnabled] = useState(token.status !== 'disabled')
	const save = async () => {
		const body: Record<string, unknown> = {}
		if (keyName(name) !== token.name) body.name = keyName(name)
		if (choice !== 'keep') body.expires_at = expiryToIso(choice, date)
		const lim = parseLimit(limit)
		if (lim !== token.spend_limit) body.spend_limit = lim
		const rpmLimit = parsePerMinute(rpm, RPM)
		if (rpmLimit !== token.rpm_limit) body.rpm_limit = rpmLimit
		const tpmLimit = parsePerMinute(tpm, TPM)
		if (tpmLimit !== token.tpm_limit) body.tpm_limit = tpmLimit
		if (models.trim() !== shownModels) body.allowed_models = parseModelList(models)
		if (enabled !== (token.status !== 'disabled')) body.status = enabled ? 'active' : 'disabled'
		if (Object.keys(body).length) await api('PATCH', `/api/tokens/${token.id}`, body)
		onSaved()
	}
	return (
		<FormModal title={`Edit “${token.name}”`} submitLabel="Save" onSubmit={save} onClose={onClose}>
			<TextField label="Name" value={name} onValue={setName} required maxLength={200} />
			<ExpiryFields choice={choice} setChoice={setChoice} date={date} setDate={setDate} current={token.expires_at} />
			<TextField label="Spend limit (USD)" value={limit} onValue={setLimit} inputMode="decimal" placeholder="No limit" hint="Leave empty for no limit." />
			<AccessFields rpm={rpm} setRpm={setRpm} tpm={tpm} setTpm={setTpm} models={models} setModels={setModels} />
			<CheckField label="Enabled" checked={enabled} onValue={setEnabled} hint="A disabled key is refused until enabled again." />
		</FormModal>
	)
}

export function DeleteTokenModal({ token, onClose, onDeleted }: { token: Token; onClose: () => void; onDeleted: () => void }) {
	return (
		<ConfirmModal
			title="Delete token?"
			message={
				<>
					Requests with <strong><bdi>{token.name}</bdi></strong> (<code>{token.key_hint}</code>) will be refused at once. Its usage history stays. This cannot be undone.
				</>
			}
			confirmLabel="Delete token"
			onConfirm={async () => {
				await api('DELETE', `/api/tokens/${token.id}`)
				onDeleted()
			}}
			onClose={onClose}
		/>
	)
}
