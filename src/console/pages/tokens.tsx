/** Tokens: the account's API keys, with reveal (eye), copy, create, edit and delete. */
import { useState } from 'preact/hooks'
import { api, messageOf, query } from '../api'
import { AccountPicker } from '../components/account-picker'
import { CopyButton } from '../components/copy-button'
import { EditIcon, EyeIcon, EyeOffIcon, PlusIcon, TrashIcon } from '../components/icons'
import { Alert, Badge, Button, Empty, IconButton, Loading, PageHeader, statusTone } from '../components/ui'
import { useLoad } from '../hooks'
import { dateTime, relative, usd } from '../lib/format'
import { useSession } from '../session'
import type { Token } from '../types'
import { CreateTokenModal, CreatedTokenModal, DeleteTokenModal, EditTokenModal } from './token-dialogs'

type Dialog = { kind: 'create' } | { kind: 'created'; token: Token; secret: string } | { kind: 'edit'; token: Token } | { kind: 'delete'; token: Token } | null

const fetchKey = async (id: number) => (await api<{ key: string }>('GET', `/api/tokens/${id}/key`)).key

function SpendCell({ t }: { t: Token }) {
	if (t.spend_limit === null) return <span>{usd(t.spent)} <span class="muted">/ no limit</span></span>
	const pct = t.spend_limit > 0 ? Math.min(100, (t.spent / t.spend_limit) * 100) : 100
	return (
		<div class="spend">
			<span>
				{usd(t.spent)} <span class="muted">/ {usd(t.spend_limit)}</span>
			</span>
			<progress class={pct >= 100 ? 'full' : pct >= 80 ? 'high' : ''} max={100} value={pct} aria-label={`${Math.round(pct)}% of the limit spent`} />
		</div>
	)
}

export function TokensPage() {
	const { account, toast } = useSession()
	const [accountId, setAccountId] = useState(account.id)
	const list = useLoad(() => api<{ data: Token[] }>('GET', `/api/tokens${query({ account_id: accountId })}`), [accountId])
	const [dialog, setDialog] = useState<Dialog>(null)
	const [revealed, setRevealed] = useState<Record<number, string>>({})
	const [rowError, setRowError] = useState<string>()

	const toggle = async (t: Token) => {
		setRowError(undefined)
		if (revealed[t.id]) {
			const { [t.id]: _, ...rest } = revealed
			setRevealed(rest)
			return
		}
		try {
			const key = await fetchKey(t.id)
			setRevealed((r) => ({ ...r, [t.id]: key }))
		} catch (e) {
			setRowError(`Could not reveal “${t.name}”: ${messageOf(e)}`)
		}
	}
	const close = () => setDialog(null)
	const tokens = list.data?.data ?? []

	return (
		<>
			<PageHeader
				title="Tokens"
				subtitle="API keys for the gateway. Send one as Authorization: Bearer sk-…"
				actions={
					<Button variant="primary" onClick={() => setDialog({ kind: 'create' })}>
						<PlusIcon /> Create token
					</Button>
				}
			/>
			<AccountPicker value={accountId} onValue={setAccountId} />
			{list.error && <Alert>{list.error}</Alert>}
			{rowError && <Alert>{rowError}</Alert>}
			{list.loading && !list.data ? (
				<Loading />
			) : tokens.length === 0 ? (
				<Empty>
					<p>No tokens yet.</p>
					<Button variant="primary" onClick={() => setDialog({ kind: 'create' })}>
						Create your first token
					</Button>
				</Empty>
			) : (
				<div class="card table-wrap">
					<table class="table cards-on-phone" aria-label="Tokens">
						<thead>
							<tr>
								<th scope="col">Name</th>
								<th scope="col">Key</th>
								<th scope="col">Created</th>
								<th scope="col">Expires</th>
								<th scope="col">Spent / limit</th>
								<th scope="col">Status</th>
								<th scope="col">Last used</th>
								<th scope="col">
									<span class="sr-only">Actions</span>
								</th>
							</tr>
						</thead>
						<tbody>
							{tokens.map((t) => {
								const full = revealed[t.id]
								return (
									<tr key={t.id} data-token={t.name}>
										<th scope="row" data-label="Name">
											{t.name}
										</th>
										<td data-label="Key">
											<div class="key-cell">
												<code class={`key${full ? ' key-full' : ''}`} data-testid="token-key">
													{full ?? t.key_hint}
												</code>
												<IconButton label={`${full ? 'Hide' : 'Show'} key of ${t.name}`} pressed={Boolean(full)} onClick={() => toggle(t)}>
													{full ? <EyeOffIcon /> : <EyeIcon />}
												</IconButton>
												<CopyButton compact label={`Copy key of ${t.name}`} text={() => full ?? fetchKey(t.id)} />
											</div>
										</td>
										<td data-label="Created" title={t.created_at}>
											{dateTime(t.created_at)}
										</td>
										<td data-label="Expires" title={t.expires_at ? relative(t.expires_at) : undefined}>
											{t.expires_at ? dateTime(t.expires_at) : 'Never'}
										</td>
										<td data-label="Spent / limit">
											<SpendCell t={t} />
										</td>
										<td data-label="Status">
											<Badge tone={statusTone(t.status)}>{t.status}</Badge>
										</td>
										<td data-label="Last used" title={t.last_used_at ?? undefined}>
											{relative(t.last_used_at)}
										</td>
										<td class="actions">
											<IconButton label={`Edit ${t.name}`} onClick={() => setDialog({ kind: 'edit', token: t })}>
												<EditIcon />
											</IconButton>
											<IconButton label={`Delete ${t.name}`} onClick={() => setDialog({ kind: 'delete', token: t })}>
												<TrashIcon />
											</IconButton>
										</td>
									</tr>
								)
							})}
						</tbody>
					</table>
				</div>
			)}
			{dialog?.kind === 'create' && (
				<CreateTokenModal
					accountId={accountId}
					onClose={close}
					onCreated={(token, secret) => {
						setDialog({ kind: 'created', token, secret })
						list.reload()
					}}
				/>
			)}
			{dialog?.kind === 'created' && <CreatedTokenModal token={dialog.token} secret={dialog.secret} onClose={close} />}
			{dialog?.kind === 'edit' && (
				<EditTokenModal
					token={dialog.token}
					onClose={close}
					onSaved={() => {
						close()
						toast('Token saved')
						list.reload()
					}}
				/>
			)}
			{dialog?.kind === 'delete' && (
				<DeleteTokenModal
					token={dialog.token}
					onClose={close}
					onDeleted={() => {
						close()
						toast(`Deleted “${dialog.token.name}”`)
						list.reload()
					}}
				/>
			)}
		</>
	)
}
