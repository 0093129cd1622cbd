/** Administration → Settings: self sign-up and the credit new self-signed-up accounts start with. */
import { useEffect, useState } from 'preact/hooks'
import { api } from '../api'
import { Alert, Button, CheckField, Loading, PageHeader, TextField } from '../components/ui'
import { useAction, useLoad } from '../hooks'
import { parseUsd } from '../lib/input'
import { useSession } from '../session'
import type { Settings } from '../types'

export function AdminSettings() {
	const { toast } = useSession()
	const current = useLoad(() => api<Settings>('GET', '/api/settings'), [])
	const [signup, setSignup] = useState(false)
	const [balance, setBalance] = useState('0')
	const save = useAction()
	useEffect(() => {
		if (!current.data) return
		setSignup(current.data.signup_enabled)
		setBalance(String(current.data.signup_balance))
	}, [current.data])
	const submit = save.submit(async () => {
		await api('PATCH', '/api/settings', { signup_enabled: signup, signup_balance: parseUsd(balance || '0') })
		toast('Settings saved')
		current.reload()
	})
	return (
		<>
			<PageHeader title="Settings" />
			{current.error && <Alert>{current.error}</Alert>}
			{!current.data ? (
				current.loading && <Loading />
			) : (
				<form class="card stack narrow" onSubmit={submit}>
					<h2>Sign-up</h2>
					{save.error && <Alert>{save.error}</Alert>}
					<CheckField label="Allow self sign-up" checked={signup} onValue={setSignup} hint="Anyone who can reach this console can create an account from the sign-in page." />
					<TextField label="Starting balance for new accounts (USD)" value={balance} onValue={setBalance} inputMode="decimal" />
					<div>
						<Button type="submit" variant="primary" busy={save.busy}>
							Save settings
						</Button>
					</div>
				</form>
			)}
		</>
	)
}
