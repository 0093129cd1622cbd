/** Administration → Accounts: balances, new accounts, and credits (positive adds money, negative removes). */
import { useState } from 'preact/hooks'
import { api, messageOf } from '../api'
import { PlusIcon } from '../components/icons'
import { Modal } from '../components/modal'
import { Alert, Badge, Button, Empty, Loading, PageHeader, TextField, statusTone } from '../components/ui'
import { useLoad } from '../hooks'
import { dateTime, usd } from '../lib/format'
import { parseUsd } from '../lib/input'
import { useSession } from '../session'
import type { Account } from '../types'

function CreditModal({ account, onClose, onDone }: { account: Account; onClose: () => void; onDone: () => void }) {
	const [amount, setAmount] = useState('')
	const [note, setNote] = useState('')
	const [error, setError] = useState<string>()
	const [busy, setBusy] = useState(false)
	const submit = async (e: Event) => {
		e.preventDefault()
		setError(undefined)
		try {
			const value = parseUsd(amount, true)
			setBusy(true)
			await api('POST', `/api/accounts/${account.id}/credit`, { amount: value, note: note.trim() || undefined })
			onDone()
		} catch (err) {
			setError(messageOf(err))
			setBusy(false)
		}
	}
	return (
		<Modal title={`Credit “${account.name}”`} onClose={onClose}>
			<form onSubmit={submit}>
				<div class="modal-body stack">
					<p>
						Current balance: <strong>{usd(account.balance)}</strong>
					</p>
					{error && <Alert>{error}</Alert>}
					<TextField label="Amount (USD)" value={amount} onValue={setAmount} inputMode="decimal" required autoFocus hint="Negative to remove money; the balance never goes below zero." />
					<TextField label="Note" value={note} onValue={setNote} maxLength={500} placeholder="Optional, e.g. invoice 2025-031" />
				</div>
				<div class="modal-foot">
					<Button onClick={onClose}>Cancel</Button>
					<Button type="submit" variant="primary" busy={busy}>
						Credit account
					</Button>
				</div>
			</form>
		</Modal>
	)
}

function NewAccountModal({ onClose, onDone }: { onClose: () => void; onDone: () => void }) {
	const [name, setName] = useState('')
	const [balance, setBalance] = useState('')
	const [error, setError] = useState<string>()
	const [busy, setBusy] = useState(false)
	const submit = async (e: Event) => {
		e.preventDefault()
		setError(undefined)
		try {
			const body = { name: name.trim(), balance: balance.trim() ? parseUsd(balance) : undefined }
			setBusy(true)
			await api('POST', '/api/accounts', body)
			onDone()
		} catch (err) {
			setError(messageOf(err))
			setBusy(false)
		}
	}
	return (
		<Modal title="New account" onClose={onClose}>
			<form onSubmit={submit}>
				<div class="modal-body stack">
					{error && <Alert>{error}</Alert>}
					<TextField label="Name" value={name} onValue={setName} required maxLength={200} autoFocus />
					<TextField label="Starting balance (USD)" value={balance} onValue={setBalance} inputMode="decimal" placeholder="0" />
				</div>
				<div class="modal-foot">
					<Button onClick={onClose}>Cancel</Button>
					<Button type="submit" variant="primary" busy={busy}>
						Create account
					</Button>
				</div>
			</form>
		</Modal>
	)
}

export function AdminAccounts() {
	const { refreshBalance, toast } = useSession()
	const list = useLoad(() => api<{ data: Account[] }>('GET', '/api/accounts'), [])
	const [credit, setCredit] = useState<Account>()
	const [creating, setCreating] = useState(false)
	return (
		<>
			<PageHeader
				title="Accounts"
				subtitle="Each account has a balance that its keys spend. Users belong to one account."
				actions={
					<Button variant="primary" onClick={() => setCreating(true)}>
						<PlusIcon /> New account
					</Button>
				}
			/>
			{list.error && <Alert>{list.error}</Alert>}
			{list.loading && !list.data ? (
				<Loading />
			) : !list.data?.data.length ? (
				<Empty>No accounts.</Empty>
			) : (
				<div class="card table-wrap">
					<table class="table cards-on-phone" aria-label="Accounts">
						<thead>
							<tr>
								<th scope="col">Name</th>
								<th scope="col">ID</th>
								<th scope="col" class="num">Balance</th>
								<th scope="col">Status</th>
								<th scope="col">Created</th>
								<th scope="col">
									<span class="sr-only">Actions</span>
								</th>
							</tr>
						</thead>
						<tbody>
							{list.data.data.map((a) => (
								<tr key={a.id} data-account={a.name}>
									<th scope="row" data-label="Name">
										{a.name}
									</th>
									<td data-label="ID">#{a.id}</td>
									<td data-label="Balance" class="num">
										{usd(a.balance)}
									</td>
									<td data-label="Status">
										<Badge tone={statusTone(a.status)}>{a.status}</Badge>
									</td>
									<td data-label="Created">{dateTime(a.created_at)}</td>
									<td class="actions">
										<Button class="btn-sm" onClick={() => setCredit(a)} aria-label={`Credit ${a.name}`}>
											Credit
										</Button>
									</td>
								</tr>
							))}
						</tbody>
					</table>
				</div>
			)}
			{credit && (
				<CreditModal
					account={credit}
					onClose={() => setCredit(undefined)}
					onDone={() => {
						toast(`Credited “${credit.name}”`)
						setCredit(undefined)
						list.reload()
						refreshBalance()
					}}
				/>
			)}
			{creating && (
				<NewAccountModal
					onClose={() => setCreating(false)}
					onDone={() => {
						setCreating(false)
						list.reload()
					}}
				/>
			)}
		</>
	)
}
