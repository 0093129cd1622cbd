/** The signed-in user and account, shared with every page (balance in the header, admin-only navigation). */
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Account, User } from './types'

export type SessionState = {
	user: User
	account: Account
	/** Re-reads the account balance (after a request, a credit, …). */
	refreshBalance: () => void
	signOut: () => void
	toast: (message: string) => void
}

export const SessionContext = createContext<SessionState | null>(null)

export function useSession(): SessionState {
	const s = useContext(SessionContext)
	if (!s) throw new Error('useSession outside the signed-in console')
	return s
}
