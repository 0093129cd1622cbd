/** Administration → Settings: self sign-up and the credit new self-signed-up accounts start with. */
import { useEffect, useState } from 'preact/hooks'
import { api, messageOf } from '../api'
import { Alert, Button, CheckField, Loading, PageHeader, TextField } from '../components/ui'
import { useLoad } from '../hooks'
import { parseUsd } from '../lib/input'
import { useSession } from '../session'
import type { Settings } from '../types'

export function AdminSettings() {
	const { toast } = useSession()
	const current = useLoad(() => api<Settings>('GET', '/api/settings'), [])
	const [signup, setSignup] = useState(false)
	const [balance, setBalance] = useState('0')
	const [error, setError] = useState<string>()
	const [busy, setBusy] = useState(false)
	useEffect(() => {
		if (!current.data) return
		setSignup(current.data.signup_enabled)
		setBalance(String(current.data.signup_balance))
	}, [current.data])
	const submit = async (e: Event) => {
		e.preventDefault()
		setError(undefined)
		try {
			const body = { signup_enabled: signup, signup_balance: parseUsd(balance || '0') }
			setBusy(true)
			await api('PATCH', '/api/settings', body)
			toast('Settings saved')
			current.reload()
		} catch (err) {
			setError(messageOf(err))
		}
		setBusy(false)
	}
	return (
		<>
			<PageHeader title="Settings" />
			{current.error && <Alert>{current.error}</Alert>}
			{!current.data ? (
				current.loading && <Loading />
			) : (
				<form class="card stack narrow" onSubmit={submit}>
					<h2>Sign-up</h2>
					{error && <Alert>{error}</Alert>}
					<CheckField label="Allow self sign-up" checked={signup} onValue={setSignup} hint="Anyone who can reach this console can create an account from the sign-in page." />
					<TextField label="Starting balance for new accounts (USD)" value={balance} onValue={setBalance} inputMode="decimal" />
					<div>
						<Button type="submit" variant="primary" busy={busy}>
							Save settings
						</Button>
					</div>
				</form>
			)}
		</>
	)
}
