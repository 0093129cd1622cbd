/** The console: loads the session, shows sign-in or the signed-in pages, keeps the balance fresh. */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, messageOf, setCsrfToken, setSessionChangedHandler, setSignedOutHandler } from './api'
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
	// Said on the Tokens page a tab opens on after following another tab's sign-in.
	const [switched, setSwitched] = useState<string>()
	const route = useRoute()
	// Whom this tab shows, and with which CSRF token: what a re-read session is held against.
	const shown = useRef<{ user: number | null; csrf: string | null }>({ user: null, csrf: null })

	const accept = useCallback((s: SessionInfo) => {
		setCsrfToken(s.csrf_token)
		shown.current = { user: s.user?.id ?? null, csrf: s.csrf_token }
		setInfo(s)
	}, [])

	const load = useCallback(() => {
		setLoadError(undefined)
		api<SessionInfo>('GET', '/api/session').then(accept, (e) => setLoadError(messageOf(e)))
	}, [accept])

	// Signed out: the sign-in page asks again whether sign-up is open (the Settings page, or another administrator,
	// may have changed it since the page loaded), keeping whatever a sign-in meanwhile brought.
	const signedOut = useCallback(() => {
		shown.current = { user: null, csrf: null }
		setSwitched(undefined)
		setInfo((s) => s && { ...s, user: null, account: null, csrf_token: null })
		api<SessionInfo>('GET', '/api/session').then(
			(fresh) => setInfo((s) => (s && !s.user ? { ...s, signup_enabled: fresh.signup_enabled } : s)),
			() => {},
		)
	}, [])

	const ended = useCallback(() => {
		setNotice('Your session has ended. Sign in again.')
		signedOut()
	}, [signedOut])

	/**
	 * The session as the cookie now has it, against the user this tab shows: another tab of the browser may have
	 * signed out (the cookie is gone) or signed in again, as the same user (a new CSRF token) or as someone else (that
	 * user's console, said in words, rather than one user's pages over another's session).
	 */
	const follow = useCallback(
		(fresh: SessionInfo) => {
			if (shown.current.user === null) return
			if (!fresh.user) return ended()
			if (fresh.user.id !== shown.current.user) {
				setSwitched(`Signed in as ${fresh.user.username} in another tab: this tab now shows that sign-in.`)
				navigate('/tokens', true)
				accept(fresh)
			} else if (fresh.csrf_token !== shown.current.csrf) {
				// The same user signed in again: only the token changed (re-rendering every page for it is not needed).
				setCsrfToken(fresh.csrf_token)
				shown.current.csrf = fresh.csrf_token
			}
		},
		[accept, ended],
	)

	useEffect(() => {
		load()
		setSignedOutHandler(ended)
		setSessionChangedHandler(() => api<SessionInfo>('GET', '/api/session').then(follow, () => {}))
	}, [load, ended, follow])

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
	// Keyed by the user: following another tab's sign-in starts the pages afresh (no dialog or filter of the last user).
	return (
		<SignedIn
			key={info.user.id}
			info={info as SessionInfo & { user: NonNullable<SessionInfo['user']>; account: Account }}
			route={route}
			notice={switched}
			onSession={follow}
			onSignedOut={signedOut}
		/>
	)
}

type SignedInProps = {
	info: SessionInfo & { user: NonNullable<SessionInfo['user']>; account: Account }
	route: string
	notice?: string
	/** The session as re-read with the balance, for the console to follow a sign-out or sign-in made in another tab. */
	onSession: (fresh: SessionInfo) => void
	onSignedOut: () => void
}

function SignedIn({ info, route, notice, onSession, onSignedOut }: SignedInProps) {
	const [account, setAccount] = useState<Account>(info.account)
	const [toasts, setToasts] = useState<Array<{ id: number; text: string }>>([])
	// Shown on the page the tab opened on, gone once the user moves on.
	const [shownNotice, setShownNotice] = useState(notice)
	const noticeRoute = useRef(route)
	useEffect(() => {
		if (route !== noticeRoute.current) setShownNotice(undefined)
	}, [route])

	// The session (GET /api/session) carries the balance: one read also tells whether another tab changed the sign-in.
	const refreshBalance = useCallback(() => {
		api<SessionInfo>('GET', '/api/session').then((s) => {
			if (s.user?.id === info.user.id && s.account) setAccount(s.account)
			onSession(s)
		}, () => {})
	}, [info.user.id, onSession])

	// Spend happens outside the console (API calls), so the balance is re-read on every page, every 20 s and when the
	// tab is looked at again.
	useEffect(refreshBalance, [route, refreshBalance])
	useEffect(() => {
		const visible = () => document.visibilityState === 'visible' && refreshBalance()
		const t = setInterval(visible, 20_000)
		document.addEventListener('visibilitychange', visible)
		return () => {
			clearInterval(t)
			document.removeEventListener('visibilitychange', visible)
		}
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
				{shownNotice && <Alert kind="info">{shownNotice}</Alert>}
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
