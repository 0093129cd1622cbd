/** Your account: who you are, the balance, and a password change. */
import { useState } from 'preact/hooks'
import { api } from '../api'
import { Alert, Badge, Button, PageHeader, TextField } from '../components/ui'
import { useAction } from '../hooks'
import { usd } from '../lib/format'
import { useSession } from '../session'

export function AccountPage() {
	const { user, account, toast } = useSession()
	const [current, setCurrent] = useState('')
	const [next, setNext] = useState('')
	const [again, setAgain] = useState('')
	const change = useAction()
	const submit = change.submit(async () => {
		if (next !== again) throw new Error('The two new passwords differ')
		await api('POST', '/api/users/me/password', { current_password: current, new_password: next })
		setCurrent('')
		setNext('')
		setAgain('')
		toast('Password changed; other sessions were signed out')
	})
	return (
		<>
			<PageHeader title="Your account" />
			<div class="grid-2">
				<section class="card" aria-labelledby="who">
					<h2 id="who">Profile</h2>
					<dl class="props">
						<dt>Username</dt>
						<dd>{user.username}</dd>
						<dt>Account</dt>
						<dd>
							<bdi>{account.name}</bdi> <span class="muted">#{account.id}</span>
						</dd>
						<dt>Balance</dt>
						<dd>{usd(account.balance)}</dd>
						<dt>Role</dt>
						<dd>{user.is_admin ? <Badge tone="info">administrator</Badge> : 'user'}</dd>
					</dl>
				</section>
				<section class="card" aria-labelledby="pw">
					<h2 id="pw">Change password</h2>
					<form class="stack" onSubmit={submit}>
						{/* Whose password this is, for password managers (and Chrome's "password forms should have username fields"). */}
						<input type="text" name="username" autoComplete="username" value={user.username} readOnly hidden />
						{change.error && <Alert>{change.error}</Alert>}
						<TextField label="Current password" type="password" value={current} onValue={setCurrent} autoComplete="current-password" required />
						<TextField label="New password" type="password" value={next} onValue={setNext} autoComplete="new-password" required minLength={8} hint="At least 8 characters." />
						<TextField label="New password again" type="password" value={again} onValue={setAgain} autoComplete="new-password" required minLength={8} />
						<div>
							<Button type="submit" variant="primary" busy={change.busy}>
								Change password
							</Button>
						</div>
					</form>
				</section>
			</div>
		</>
	)
}
