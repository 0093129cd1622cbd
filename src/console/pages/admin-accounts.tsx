/** Administration → Accounts: balances, new accounts, and credits (positive adds money, negative removes). */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { AddButton } from '../components/actions'
import { DataTable, NumCell } from '../components/data-table'
import { FormModal } from '../components/modal'
import { Badge, Button, DateTime, PageHeader, TextField, statusTone } from '../components/ui'
import { useDialogs, useLoad } from '../hooks'
import { usd } from '../lib/format'
import { parseUsd } from '../lib/input'
import { useSession } from '../session'
import type { Account } from '../types'

function CreditModal({ account, onClose, onDone }: { account: Account; onClose: () => void; onDone: () => void }) {
	const [amount, setAmount] = useState('')
	const [note, setNote] = useState('')
	const save = async () => {
		await api('POST', `/api/accounts/${account.id}/credit`, { amount: parseUsd(amount, true), note: note.trim() || undefined })
		onDone()
	}
	const balance = (
		<p>
			Current balance: <strong>{usd(account.balance)}</strong>
		</p>
	)
	return (
		<FormModal title={`Credit “${account.name}”`} submitLabel="Credit account" onSubmit={save} onClose={onClose} intro={balance}>
			<TextField label="Amount (USD)" value={amount} onValue={setAmount} inputMode="decimal" required autoFocus hint="Negative to remove money; the balance never goes below zero." />
			<TextField label="Note" value={note} onValue={setNote} maxLength={500} placeholder="Optional, e.g. invoice 2025-031" />
		</FormModal>
	)
}

function NewAccountModal({ onClose, onDone }: { onClose: () => void; onDone: () => void }) {
	const [name, setName] = useState('')
	const [balance, setBalance] = useState('')
	const save = async () => {
		await api('POST', '/api/accounts', { name: name.trim(), balance: balance.trim() ? parseUsd(balance) : undefined })
		onDone()
	}
	return (
		<FormModal title="New account" submitLabel="Create account" onSubmit={save} onClose={onClose}>
			<TextField label="Name" value={name} onValue={setName} required maxLength={200} autoFocus />
			<TextField label="Starting balance (USD)" value={balance} onValue={setBalance} inputMode="decimal" placeholder="0" />
		</FormModal>
	)
}

type Dialog = { kind: 'new' } | { kind: 'credit'; account: Account }

export function AdminAccounts() {
	const { refreshBalance } = useSession()
	const list = useLoad(() => api<{ data: Account[] }>('GET', '/api/accounts'), [])
	const dialog = useDialogs<Dialog>(list.reload)
	const credit = dialog.open?.kind === 'credit' ? dialog.open.account : undefined
	return (
		<>
			<PageHeader
				title="Accounts"
				subtitle="Each account has a balance that its keys spend. Users belong to one account."
				actions={<AddButton label="New account" onClick={() => dialog.show({ kind: 'new' })} />}
			/>
			<DataTable
				loaded={list}
				label="Accounts"
				columns={['Name', 'ID', { label: 'Balance', num: true }, 'Status', 'Created']}
				actions
				empty="No accounts."
				row={(a) => (
					<tr key={a.id} data-account={a.name}>
						<th scope="row" data-label="Name">
							{a.name}
						</th>
						<td data-label="ID">#{a.id}</td>
						<NumCell label="Balance">{usd(a.balance)}</NumCell>
						<td data-label="Status">
							<Badge tone={statusTone(a.status)}>{a.status}</Badge>
						</td>
						<td data-label="Created">
							<DateTime iso={a.created_at} />
						</td>
						<td class="actions">
							<Button class="btn-sm" onClick={() => dialog.show({ kind: 'credit', account: a })} aria-label={`Credit ${a.name}`}>
								Credit
							</Button>
						</td>
					</tr>
				)}
			/>
			{credit && (
				<CreditModal
					account={credit}
					onClose={dialog.close}
					onDone={() => {
						dialog.done(`Credited “${credit.name}”`)
						refreshBalance()
					}}
				/>
			)}
			{dialog.open?.kind === 'new' && <NewAccountModal onClose={dialog.close} onDone={() => dialog.done()} />}
		</>
	)
}
