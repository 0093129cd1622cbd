/** Administration → Users: console users, their accounts and roles; create, edit, delete. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { AccountListError, AccountSearch, accountLabel, useAccountChoice } from '../components/account-picker'
import { AddButton, DeleteButton, EditButton } from '../components/actions'
import { DataTable } from '../components/data-table'
import { ConfirmModal, FormModal } from '../components/modal'
import { Badge, CheckField, DateTime, PageHeader, SelectField, TextField, statusTone } from '../components/ui'
import { useDialogs, useLoad } from '../hooks'
import { isolated } from '../lib/format'
import { parseUsd } from '../lib/input'
import { useSession } from '../session'
import type { User } from '../types'

function NewUserModal({ onClose, onDone }: { onClose: () => void; onDone: (u: User) => void }) {
	const [username, setUsername] = useState('')
	const [password, setPassword] = useState('')
	const [accountId, setAccountId] = useState('new')
	const [accountName, setAccountName] = useState('')
	const [balance, setBalance] = useState('')
	const [admin, setAdmin] = useState(false)
	// Searched on the server when there are many: the account wanted may be older than any list's first answer.
	const accounts = useAccountChoice(accountId === 'new' ? undefined : Number(accountId))
	const save = async () => {
		const body: Record<string, unknown> = { username: username.trim(), password, is_admin: admin }
		if (accountId === 'new') {
			if (accountName.trim()) body.account_name = accountName.trim()
			if (balance.trim()) body.balance = parseUsd(balance)
		} else body.account_id = Number(accountId)
		onDone(await api<User>('POST', '/api/users', body))
	}
	return (
		<FormModal title="New user" submitLabel="Create user" onSubmit={save} onClose={onClose}>
			<TextField label="Username" value={username} onValue={setUsername} required autoFocus autoComplete="off" autoCapitalize="none" hint="Letters, digits and . _ @ -" />
			<TextField label="Password" type="password" value={password} onValue={setPassword} required minLength={8} autoComplete="new-password" hint="At least 8 characters. Share it with the user privately." />
			<AccountSearch choice={accounts} />
			<SelectField label="Account" value={accountId} onValue={setAccountId} options={[{ value: 'new', label: 'A new account' }, ...accounts.offered.map((a) => ({ value: String(a.id), label: accountLabel(a) }))]} />
			<AccountListError choice={accounts} />
			{accountId === 'new' && (
				<>
					<TextField label="Account name" value={accountName} onValue={setAccountName} placeholder="Same as the username" />
					<TextField label="Starting balance (USD)" value={balance} onValue={setBalance} inputMode="decimal" placeholder="0" />
				</>
			)}
			<CheckField label="Administrator" checked={admin} onValue={setAdmin} hint="Administrators see every account and manage channels, prices and users." />
		</FormModal>
	)
}

function EditUserModal({ user, onClose, onDone }: { user: User; onClose: () => void; onDone: () => void }) {
	const [admin, setAdmin] = useState(user.is_admin)
	const [active, setActive] = useState(user.status === 'active')
	const [password, setPassword] = useState('')
	const save = async () => {
		const body: Record<string, unknown> = {}
		if (admin !== user.is_admin) body.is_admin = admin
		if (active !== (user.status === 'active')) body.status = active ? 'active' : 'disabled'
		if (password) body.password = password
		if (Object.keys(body).length) await api('PATCH', `/api/users/${user.id}`, body)
		onDone()
	}
	return (
		<FormModal title={`Edit ${user.username}`} submitLabel="Save" onSubmit={save} onClose={onClose}>
			<CheckField label="Administrator" checked={admin} onValue={setAdmin} />
			<CheckField label="Active" checked={active} onValue={setActive} hint="A disabled user is signed out and cannot sign in." />
			<TextField label="New password" type="password" value={password} onValue={setPassword} minLength={8} autoComplete="new-password" placeholder="Unchanged" hint="Setting one signs the user out everywhere." />
		</FormModal>
	)
}

type Dialog = { kind: 'new' } | { kind: 'edit'; user: User } | { kind: 'delete'; user: User }

export function AdminUsers() {
	const { user: me } = useSession()
	const list = useLoad(() => api<{ data: User[] }>('GET', '/api/users'), [])
	const dialog = useDialogs<Dialog>(list.reload)
	const { open } = dialog
	return (
		<>
			<PageHeader title="Users" subtitle="People who sign in to this console." actions={<AddButton label="New user" onClick={() => dialog.show({ kind: 'new' })} />} />
			<DataTable
				loaded={list}
				label="Users"
				columns={['Username', 'Account', 'Role', 'Status', 'Created']}
				actions
				empty="No users."
				row={(u) => (
					<tr key={u.id} data-user={u.username}>
						<th scope="row" data-label="Username">
							{u.username}
							{u.id === me.id && <span class="muted"> (you)</span>}
						</th>
						<td data-label="Account" class="name">
							{u.account_name} <span class="muted">#{u.account_id}</span>
						</td>
						<td data-label="Role">{u.is_admin ? <Badge tone="info">administrator</Badge> : 'user'}</td>
						<td data-label="Status">
							<Badge tone={statusTone(u.status)}>{u.status}</Badge>
						</td>
						<td data-label="Created">
							<DateTime iso={u.created_at} />
						</td>
						<td class="actions">
							<EditButton name={u.username} onClick={() => dialog.show({ kind: 'edit', user: u })} />
							<DeleteButton name={u.username} disabled={u.id === me.id} onClick={() => dialog.show({ kind: 'delete', user: u })} />
						</td>
					</tr>
				)}
			/>
			{open?.kind === 'new' && (
				<NewUserModal onClose={dialog.close} onDone={(u) => dialog.done(`Created ${isolated(u.username)}`)} />
			)}
			{open?.kind === 'edit' && <EditUserModal user={open.user} onClose={dialog.close} onDone={() => dialog.done('User saved')} />}
			{open?.kind === 'delete' && (
				<ConfirmModal
					title="Delete user?"
					message={
						<>
							<strong><bdi>{open.user.username}</bdi></strong> will no longer be able to sign in. The account “<bdi>{open.user.account_name}</bdi>”, its keys and its usage stay.
						</>
					}
					confirmLabel="Delete user"
					onConfirm={async () => {
						await api('DELETE', `/api/users/${open.user.id}`)
						dialog.done(`Deleted ${isolated(open.user.username)}`)
					}}
					onClose={dialog.close}
				/>
			)}
		</>
	)
}
