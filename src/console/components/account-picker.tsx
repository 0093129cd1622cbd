/**
 * For administrators: which account a page shows (users always see their own and get no picker), and the account
 * choice of other forms. There may be many thousands: the server pages and searches them (`GET /api/accounts?search=`).
 */
import { useState } from 'preact/hooks'
import { api, query } from '../api'
import { type Loaded, useLoad } from '../hooks'
import { useSession } from '../session'
import type { Account, Page } from '../types'
import { Alert, Button, SelectField, TextField } from './ui'

/** Accounts a choice offers at once; past that it offers a search. */
const ACCOUNT_OPTIONS = 100

export type AccountChoice = {
	search: string
	setSearch: (v: string) => void
	/** The accounts offered: the chosen one first when the search leaves it out, then those found. */
	offered: Account[]
	/** Whether to show the search box: more accounts than offered at once, or a search typed. */
	searchable: boolean
	list: Loaded<Page<Account> & { total: number }>
	reload: () => void
}

/** The accounts to choose among, searched on the server; `chosen` (say, named in the address) is always offered. */
export function useAccountChoice(chosen: number | undefined, { enabled = true, refresh }: { enabled?: boolean; refresh?: unknown } = {}): AccountChoice {
	const [search, setSearch] = useState('')
	const list = useLoad(
		() => (enabled ? api<Page<Account> & { total: number }>('GET', `/api/accounts${query({ search: search.trim(), limit: ACCOUNT_OPTIONS })}`) : Promise.resolve({ data: [], next_cursor: null, total: 0 })),
		[enabled, search, refresh],
	)
	const missing = enabled && chosen !== undefined && list.data !== undefined && !list.data.data.some((a) => a.id === chosen)
	// Fetched by id only when the list leaves it out (an old account past the first answer, or searched away).
	const one = useLoad(() => (missing ? api<Account>('GET', `/api/accounts/${chosen}`) : Promise.resolve(undefined)), [missing, chosen, refresh])
	const found = list.data?.data ?? []
	const offered = one.data && one.data.id === chosen && missing ? [one.data, ...found] : found
	return {
		search,
		setSearch,
		offered,
		searchable: (list.data?.total ?? 0) > ACCOUNT_OPTIONS || search !== '',
		list,
		reload: () => {
			list.reload()
			one.reload()
		},
	}
}

export const accountLabel = (a: Account) => `${a.name} (#${a.id})`

/** The search box of an account choice, shown when there are many accounts. */
export function AccountSearch({ choice }: { choice: AccountChoice }) {
	if (!choice.searchable) return null
	// Enter searches (the list follows the typing): inside a dialog's form it would submit with the account selected so far.
	const stay = (e: KeyboardEvent) => {
		if (e.key === 'Enter') e.preventDefault()
	}
	return <TextField label="Search accounts" value={choice.search} onValue={choice.setSearch} type="search" autoComplete="off" placeholder="Name, or #id" onKeyDown={stay} />
}

/** Why the accounts are not offered, with a way to ask again (a list that failed to load says so). */
export function AccountListError({ choice }: { choice: AccountChoice }) {
	if (!choice.list.error) return null
	return (
		<Alert>
			The accounts did not load: {choice.list.error}{' '}
			<Button class="btn-sm" busy={choice.list.loading} onClick={choice.reload}>
				Try again
			</Button>
		</Alert>
	)
}

/** `refresh` changes when the page's Refresh is pressed: the accounts are read again with the page. */
export function AccountPicker({ value, onValue, refresh }: { value: number; onValue: (id: number) => void; refresh?: unknown }) {
	const { user } = useSession()
	const choice = useAccountChoice(value, { enabled: user.is_admin, refresh })
	if (!user.is_admin) return null
	if (choice.list.error && !choice.list.data) return <AccountListError choice={choice} />
	// One account in all: nothing to choose.
	if (!choice.list.data || (choice.list.data.total < 2 && !choice.search)) return null
	const options = choice.offered.map((a) => ({ value: String(a.id), label: accountLabel(a) }))
	// Until the account named is read (or when it is gone), it is still named rather than the select showing another.
	if (!choice.offered.some((a) => a.id === value)) options.unshift({ value: String(value), label: `#${value}` })
	return (
		<div class="picker">
			<AccountSearch choice={choice} />
			<SelectField label="Account" value={String(value)} onValue={(v) => onValue(Number(v))} options={options} />
			<AccountListError choice={choice} />
		</div>
	)
}
