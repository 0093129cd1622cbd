/** Administration → Users: console users, their accounts and roles; create, edit, delete. */
import { useState } from 'preact/hooks'
import { api, messageOf } from '../api'
import { EditIcon, PlusIcon, TrashIcon } from '../components/icons'
import { ConfirmModal, Modal } from '../components/modal'
import { Alert, Badge, Button, CheckField, Empty, IconButton, Loading, PageHeader, SelectField, TextField, statusTone } from '../components/ui'
import { useLoad } from '../hooks'
import { dateTime } from '../lib/format'
import { parseUsd } from '../lib/input'
import { useSession } from '../session'
import type { Account, User } from '../types'

function NewUserModal({ accounts, onClose, onDone }: { accounts: Account[]; onClose: () => void; onDone: (u: User) => void }) {
	const [username, setUsername] = useState('')
	const [password, setPassword] = useState('')
	const [accountId, setAccountId] = useState('new')
	const [accountName, setAccountName] = useState('')
	const [balance, setBalance] = useState('')
	const [admin, setAdmin] = useState(false)
	const [error, setError] = useState<string>()
	const [busy, setBusy] = useState(false)
	const submit = async (e: Event) => {
		e.preventDefault()
		setError(undefined)
		try {
			const body: Record<string, unknown> = { username: username.trim(), password, is_admin: admin }
			if (accountId === 'new') {
				if (accountName.trim()) body.account_name = accountName.trim()
				if (balance.trim()) body.balance = parseUsd(balance)
			} else body.account_id = Number(accountId)
			setBusy(true)
			onDone(await api<User>('POST', '/api/users', body))
		} catch (err) {
			setError(messageOf(err))
			setBusy(false)
		}
	}
	return (
		<Modal title="New user" onClose={onClose}>
			<form onSubmit={submit}>
				<div class="modal-body stack">
					{error && <Alert>{error}</Alert>}
					<TextField label="Username" value={username} onValue={setUsername} required autoFocus autoComplete="off" autoCapitalize="none" hint="Letters, digits and . _ @ -" />
					<TextField label="Password" type="password" value={password} onValue={setPassword} required minLength={8} autoComplete="new-password" hint="At least 8 characters. Share it with the user privately." />
					<SelectField label="Account" value={accountId} onValue={setAccountId} options={[{ value: 'new', label: 'A new account' }, ...accounts.map((a) => ({ value: String(a.id), label: `${a.name} (#${a.id})` }))]} />
					{accountId === 'new' && (
						<>
							<TextField label="Account name" value={accountName} onValue={setAccountName} placeholder="Same as the username" />
							<TextField label="Starting balance (USD)" value={balance} onValue={setBalance} inputMode="decimal" placeholder="0" />
						</>
					)}
					<CheckField label="Administrator" checked={admin} onValue={setAdmin} hint="Administrators see every account and manage channels, prices and users." />
				</div>
				<div class="modal-foot">
					<Button onClick={onClose}>Cancel</Button>
					<Button type="submit" variant="primary" busy={busy}>
						Create user
					</Button>
				</div>
			</form>
		</Modal>
	)
}

function EditUserModal({ user, onClose, onDone }: { user: User; onClose: () => void; onDone: () => void }) {
	const [admin, setAdmin] = useState(user.is_admin)
	const [active, setActive] = useState(user.status === 'active')
	const [password, setPassword] = useState('')
	const [error, setError] = useState<string>()
	const [busy, setBusy] = useState(false)
	const submit = async (e: Event) => {
		e.preventDefault()
		setError(undefined)
		const body: Record<string, unknown> = {}
		if (admin !== user.is_admin) body.is_admin = admin
		if (active !== (user.status === 'active')) body.status = active ? 'active' : 'disabled'
		if (password) body.password = password
		setBusy(true)
		try {
			if (Object.keys(body).length) await api('PATCH', `/api/users/${user.id}`, body)
			onDone()
		} catch (err) {
			setError(messageOf(err))
			setBusy(false)
		}
	}
	return (
		<Modal title={`Edit ${user.username}`} onClose={onClose}>
			<form onSubmit={submit}>
				<div class="modal-body stack">
					{error && <Alert>{error}</Alert>}
					<CheckField label="Administrator" checked={admin} onValue={setAdmin} />
					<CheckField label="Active" checked={active} onValue={setActive} hint="A disabled user is signed out and cannot sign in." />
					<TextField label="New password" type="password" value={password} onValue={setPassword} minLength={8} autoComplete="new-password" placeholder="Unchanged" hint="Setting one signs the user out everywhere." />
				</div>
				<div class="modal-foot">
					<Button onClick={onClose}>Cancel</Button>
					<Button type="submit" variant="primary" busy={busy}>
						Save
					</Button>
				</div>
			</form>
		</Modal>
	)
}

export function AdminUsers() {
	const { user: me, toast } = useSession()
	const list = useLoad(() => api<{ data: User[] }>('GET', '/api/users'), [])
	const accounts = useLoad(() => api<{ data: Account[] }>('GET', '/api/accounts'), [])
	const [creating, setCreating] = useState(false)
	const [editing, setEditing] = useState<User>()
	const [deleting, setDeleting] = useState<User>()
	const [delError, setDelError] = useState<string>()
	const [delBusy, setDelBusy] = useState(false)
	const remove = async () => {
		if (!deleting) return
		setDelBusy(true)
		try {
			await api('DELETE', `/api/users/${deleting.id}`)
			toast(`Deleted ${deleting.username}`)
			setDeleting(undefined)
			list.reload()
		} catch (e) {
			setDelError(messageOf(e))
		}
		setDelBusy(false)
	}
	return (
		<>
			<PageHeader
				title="Users"
				subtitle="People who sign in to this console."
				actions={
					<Button variant="primary" onClick={() => setCreating(true)}>
						<PlusIcon /> New user
					</Button>
				}
			/>
			{list.error && <Alert>{list.error}</Alert>}
			{list.loading && !list.data ? (
				<Loading />
			) : !list.data?.data.length ? (
				<Empty>No users.</Empty>
			) : (
				<div class="card table-wrap">
					<table class="table cards-on-phone" aria-label="Users">
						<thead>
							<tr>
								<th scope="col">Username</th>
								<th scope="col">Account</th>
								<th scope="col">Role</th>
								<th scope="col">Status</th>
								<th scope="col">Created</th>
								<th scope="col">
									<span class="sr-only">Actions</span>
								</th>
							</tr>
						</thead>
						<tbody>
							{list.data.data.map((u) => (
								<tr key={u.id} data-user={u.username}>
									<th scope="row" data-label="Username">
										{u.username}
										{u.id === me.id && <span class="muted"> (you)</span>}
									</th>
									<td data-label="Account">
										{u.account_name} <span class="muted">#{u.account_id}</span>
									</td>
									<td data-label="Role">{u.is_admin ? <Badge tone="info">administrator</Badge> : 'user'}</td>
									<td data-label="Status">
										<Badge tone={statusTone(u.status)}>{u.status}</Badge>
									</td>
									<td data-label="Created">{dateTime(u.created_at)}</td>
									<td class="actions">
										<IconButton label={`Edit ${u.username}`} onClick={() => setEditing(u)}>
											<EditIcon />
										</IconButton>
										<IconButton label={`Delete ${u.username}`} disabled={u.id === me.id} onClick={() => {
												setDelError(undefined)
												setDeleting(u)
											}}>
											<TrashIcon />
										</IconButton>
									</td>
								</tr>
							))}
						</tbody>
					</table>
				</div>
			)}
			{creating && (
				<NewUserModal
					accounts={accounts.data?.data ?? []}
					onClose={() => setCreating(false)}
					onDone={(u) => {
						setCreating(false)
						toast(`Created ${u.username}`)
						list.reload()
						accounts.reload()
					}}
				/>
			)}
			{editing && (
				<EditUserModal
					user={editing}
					onClose={() => setEditing(undefined)}
					onDone={() => {
						setEditing(undefined)
						toast('User saved')
						list.reload()
					}}
				/>
			)}
			{deleting && (
				<ConfirmModal
					title="Delete user?"
					message={
						<>
							<strong>{deleting.username}</strong> will no longer be able to sign in. The account “{deleting.account_name}”, its keys and its usage stay.
						</>
					}
					confirmLabel="Delete user"
					busy={delBusy}
					error={delError}
					onConfirm={remove}
					onClose={() => setDeleting(undefined)}
				/>
			)}
		</>
	)
}
