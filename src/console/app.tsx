/** The console: loads the session, shows sign-in or the signed-in pages, keeps the balance fresh. */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks'
import { api, messageOf, setCsrfToken, setSignedOutHandler } from './api'
import { Layout } from './components/layout'
import { Alert, Loading } from './components/ui'
import { AccountPage } from './pages/account'
import { AdminAccounts } from './pages/admin-accounts'
import { AdminChannels } from './pages/admin-channels'
import { AdminPrices } from './pages/admin-prices'
import { AdminSettings } from './pages/admin-settings'
import { AdminUsers } from './pages/admin-users'
import { ModelsPage } from './pages/models'
import { SignIn } from './pages/sign-in'
import { TokensPage } from './pages/tokens'
import { UsagePage } from './pages/usage'
import { navigate, useRoute } from './router'
import { SessionContext, type SessionState } from './session'
import type { Account, SessionInfo } from './types'

const TITLES: Record<string, string> = {
	'/tokens': 'Tokens',
	'/usage': 'Usage',
	'/models': 'Models',
	'/account': 'Your account',
	'/admin/accounts': 'Accounts',
	'/admin/users': 'Users',
	'/admin/channels': 'Channels',
	'/admin/prices': 'Prices',
	'/admin/settings': 'Settings',
}

function Page({ route, admin }: { route: string; admin: boolean }) {
	if (route.startsWith('/admin/') && !admin) return <Alert>This page is for administrators.</Alert>
	switch (route) {
		case '/tokens':
			return <TokensPage />
		case '/usage':
			return <UsagePage />
		case '/models':
			return <ModelsPage />
		case '/account':
			return <AccountPage />
		case '/admin/accounts':
			return <AdminAccounts />
		case '/admin/users':
			return <AdminUsers />
		case '/admin/channels':
			return <AdminChannels />
		case '/admin/prices':
			return <AdminPrices />
		case '/admin/settings':
			return <AdminSettings />
		default:
			return <Alert kind="info">There is no page here. Choose one from the menu.</Alert>
	}
}

export function App() {
	const [info, setInfo] = useState<SessionInfo>()
	const [loadError, setLoadError] = useState<string>()
	const [notice, setNotice] = useState<string>()
	const route = useRoute()

	const accept = useCallback((s: SessionInfo) => {
		setCsrfToken(s.csrf_token)
		setInfo(s)
	}, [])

	const load = useCallback(() => {
		setLoadError(undefined)
		api<SessionInfo>('GET', '/api/session').then(accept, (e) => setLoadError(messageOf(e)))
	}, [accept])

	// Signed out: the sign-in page asks again whether sign-up is open (the Settings page, or another administrator,
	// may have changed it since the page loaded), keeping whatever a sign-in meanwhile brought.
	const signedOut = useCallback(() => {
		setInfo((s) => s && { ...s, user: null, account: null, csrf_token: null })
		api<SessionInfo>('GET', '/api/session').then(
			(fresh) => setInfo((s) => (s && !s.user ? { ...s, signup_enabled: fresh.signup_enabled } : s)),
			() => {},
		)
	}, [])

	useEffect(() => {
		load()
		setSignedOutHandler(() => {
			setNotice('Your session has ended. Sign in again.')
			signedOut()
		})
	}, [load, signedOut])

	useEffect(() => {
		document.title = `${TITLES[route] ?? 'Console'} · Switchboard`
		if (info?.user && route === '/') navigate('/tokens', true)
	}, [route, info?.user])

	if (loadError)
		return (
			<main class="auth" id="main">
				<div class="auth-card">
					<Alert>{loadError}</Alert>
					<button type="button" class="btn btn-primary" onClick={load}>
						Try again
					</button>
				</div>
			</main>
		)
	if (!info) return <Loading />
	if (!info.user || !info.account) {
		const signedIn = (s: SessionInfo) => {
			setNotice(undefined)
			accept(s)
		}
		return <SignIn signupEnabled={info.signup_enabled} notice={notice} onSignedIn={signedIn} />
	}
	return <SignedIn info={info as SessionInfo & { user: NonNullable<SessionInfo['user']>; account: Account }} route={route} onSignedOut={signedOut} />
}

function SignedIn({ info, route, onSignedOut }: { info: SessionInfo & { user: NonNullable<SessionInfo['user']>; account: Account }; route: string; onSignedOut: () => void }) {
	const [account, setAccount] = useState<Account>(info.account)
	const [toasts, setToasts] = useState<Array<{ id: number; text: string }>>([])

	const refreshBalance = useCallback(() => {
		api<Account>('GET', `/api/accounts/${info.account.id}`).then(setAccount, () => {})
	}, [info.account.id])

	// Spend happens outside the console (API calls), so the balance is re-read on every page and every 20 s.
	useEffect(refreshBalance, [route, refreshBalance])
	useEffect(() => {
		const t = setInterval(() => document.visibilityState === 'visible' && refreshBalance(), 20_000)
		return () => clearInterval(t)
	}, [refreshBalance])

	const toast = useCallback((text: string) => {
		const id = Date.now() + Math.random()
		setToasts((t) => [...t.slice(-2), { id, text }])
		setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 3500)
	}, [])

	const signOut = useCallback(() => {
		api('DELETE', '/api/session').finally(() => {
			setCsrfToken(null)
			// Back to the start: whoever signs in next lands on their own Tokens page, not on this user's page (for
			// a non-administrator after an administrator, "This page is for administrators."). An expired session
			// keeps its page instead, so the same user signing in again returns to it.
			navigate('/', true)
			onSignedOut()
		})
	}, [onSignedOut])

	const state: SessionState = useMemo(() => ({ user: info.user, account, refreshBalance, signOut, toast }), [info.user, account, refreshBalance, signOut, toast])

	return (
		<SessionContext.Provider value={state}>
			<Layout route={route}>
				<Page route={route} admin={info.user.is_admin} />
			</Layout>
			<div class="toasts" aria-live="polite" role="status">
				{toasts.map((t) => (
					<div key={t.id} class="toast">
						{t.text}
					</div>
				))}
			</div>
		</SessionContext.Provider>
	)
}
