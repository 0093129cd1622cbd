/** For administrators: which account a page shows (users always see their own and get no picker). */
import { api } from '../api'
import { useLoad } from '../hooks'
import { useSession } from '../session'
import type { Account } from '../types'
import { SelectField } from './ui'

export function AccountPicker({ value, onValue }: { value: number; onValue: (id: number) => void }) {
	const { user } = useSession()
	const accounts = useLoad(() => (user.is_admin ? api<{ data: Account[] }>('GET', '/api/accounts') : Promise.resolve({ data: [] })), [user.is_admin])
	if (!user.is_admin || !accounts.data || accounts.data.data.length < 2) return null
	return (
		<div class="picker">
			<SelectField
				label="Account"
				value={String(value)}
				onValue={(v) => onValue(Number(v))}
				options={accounts.data.data.map((a) => ({ value: String(a.id), label: `${a.name} (#${a.id})` }))}
			/>
		</div>
	)
}
