/**
 * Administration → Accounts: balances, new accounts, credits (positive adds money, negative removes), and disabling an
 * account. Searched and paged by the server, as the Tokens page: there may be many thousands of accounts.
 */
import { useState } from 'preact/hooks'
import { api, query } from '../api'
import { AddButton, EnableButton } from '../components/actions'
import { DataTable, NumCell } from '../components/data-table'
import { ListPager } from '../components/list-pager'
import { ConfirmModal, FormModal } from '../components/modal'
import { Badge, Button, DateTime, PageHeader, TextField, statusTone } from '../components/ui'
import { useAction, useDialogs, useLoad } from '../hooks'
import { isolated, usd } from '../lib/format'
import { parseUsd } from '../lib/input'
import { addressCursors, pageTurner, usePageAddress } from '../page-address'
import { useSession } from '../session'
import type { Account, Page } from '../types'

/** Accounts per page of the table. */
const PAGE_SIZE = 50

/** Where the history entry keeps the newer pages' cursors (page-address.ts). */
const CURSORS = 'accountCursors'

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

type Dialog = { kind: 'new' } | { kind: 'credit'; account: Account } | { kind: 'disable'; account: Account }

export function AdminAccounts() {
	const { refreshBalance, account: own } = useSession()
	const [search, setSearch] = useState(() => new URLSearchParams(location.search).get('search') ?? '')
	const [cursors, setCursors] = useState(() => addressCursors(CURSORS))
	const cursor = cursors[cursors.length - 1]
	const turning = usePageAddress({
		route: '/admin/accounts',
		stateKey: CURSORS,
		params: { search: search.trim() },
		cursors,
		restore: () => {
			setSearch(new URLSearchParams(location.search).get('search') ?? '')
			setCursors(addressCursors(CURSORS))
		},
	})
	// Each answer carries the cursors that led to it: the pager names the page shown, not the one still loading.
	const list = useLoad(
		async () => ({ ...(await api<Page<Account> & { total: number }>('GET', `/api/accounts${query({ search: search.trim(), limit: PAGE_SIZE, cursor })}`)), cursors }),
		[search, cursor],
	)
	const shown = list.data?.cursors ?? [undefined]
	const total = list.data?.total ?? 0
	const page = shown.length
	const turn = pageTurner({ shown, next: list.data?.next_cursor, cursors, setCursors, list, turning })
	const dialog = useDialogs<Dialog>(list.reload)
	const credit = dialog.open?.kind === 'credit' ? dialog.open.account : undefined
	const disabling = dialog.open?.kind === 'disable' ? dialog.open.account : undefined
	const enable = useAction()
	// Disabling asks first (it stops every key of the account); enabling is done at once.
	const toggle = (a: Account, on: boolean) =>
		on
			? enable.run(async () => {
					await api('POST', `/api/accounts/${a.id}/enable`)
					dialog.done(`Enabled “${isolated(a.name)}”`)
				})
			: dialog.show({ kind: 'disable', account: a })
	return (
		<>
			<PageHeader
				title="Accounts"
				subtitle="Each account has a balance that its keys spend. Users belong to one account."
				actions={<AddButton label="New account" onClick={() => dialog.show({ kind: 'new' })} />}
			/>
			{(total > PAGE_SIZE || search) && (
				<div class="toolbar">
					<TextField
						label="Search accounts"
						value={search}
						onValue={(v) => {
							setSearch(v)
							setCursors([undefined])
						}}
						type="search"
						autoComplete="off"
						placeholder="Name, or #id"
					/>
				</div>
			)}
			<DataTable
				loaded={list}
				label="Accounts"
				columns={['Name', 'ID', { label: 'Balance', num: true }, 'Status', 'Created']}
				actions
				errors={[enable.error]}
				empty={search.trim() ? <p>No account matches “{search.trim()}”.</p> : 'No accounts.'}
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
							<EnableButton
								name={a.name}
								enabled={a.status === 'active'}
								onToggle={(on) => toggle(a, on)}
								refused={a.id === own.id && a.status === 'active' ? 'You cannot disable the account you are signed in with' : undefined}
							/>
						</td>
					</tr>
				)}
			/>
			<ListPager page={page} pages={Math.max(page, Math.ceil(total / PAGE_SIZE))} setPage={turn} loading={list.loading && Boolean(list.data)} error={list.error} />
			{credit && (
				<CreditModal
					account={credit}
					onClose={dialog.close}
					onDone={() => {
						dialog.done(`Credited “${isolated(credit.name)}”`)
						refreshBalance()
					}}
				/>
			)}
			{disabling && (
				<ConfirmModal
					title="Disable account?"
					message={
						<>
							Every key of <strong><bdi>{disabling.name}</bdi></strong> stops working at once and its users are signed out. Requests already running finish; its balance, keys
							and usage stay, and enabling it again restores them.
						</>
					}
					confirmLabel="Disable account"
					onConfirm={async () => {
						await api('POST', `/api/accounts/${disabling.id}/disable`)
						dialog.done(`Disabled “${isolated(disabling.name)}”`)
					}}
					onClose={dialog.close}
				/>
			)}
			{dialog.open?.kind === 'new' && <NewAccountModal onClose={dialog.close} onDone={() => dialog.done()} />}
		</>
	)
}
