/** The frame of every signed-in page: top bar with the balance, navigation, and the page itself. */
import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { usd } from '../lib/format'
import { linkClick } from '../router'
import { useSession } from '../session'
import { Logo } from './icons'

type NavItem = { route: string; label: string }

const MAIN: NavItem[] = [
	{ route: '/tokens', label: 'Tokens' },
	{ route: '/usage', label: 'Usage' },
	{ route: '/models', label: 'Models' },
]

const ADMIN: NavItem[] = [
	{ route: '/admin/accounts', label: 'Accounts' },
	{ route: '/admin/users', label: 'Users' },
	{ route: '/admin/channels', label: 'Channels' },
	{ route: '/admin/prices', label: 'Prices' },
	{ route: '/admin/settings', label: 'Settings' },
]

function NavLink({ item, route }: { item: NavItem; route: string }) {
	const active = route === item.route || route.startsWith(`${item.route}/`)
	return (
		<li>
			<a href={`/console${item.route}`} onClick={linkClick(item.route)} aria-current={active ? 'page' : undefined} class={active ? 'active' : undefined}>
				{item.label}
			</a>
		</li>
	)
}

/**
 * On a phone the navigation is a strip that scrolls sideways: bring the current page's item into it, or an
 * administrator on Settings sees only "Tokens Usage Models Accounts Us…" and not where they are.
 */
function useCurrentInView(route: string) {
	const nav = useRef<HTMLElement>(null)
	useEffect(() => {
		const strip = nav.current
		const item = strip?.querySelector<HTMLElement>('[aria-current="page"]')
		if (!strip || !item || strip.scrollWidth <= strip.clientWidth) return
		const s = strip.getBoundingClientRect()
		const i = item.getBoundingClientRect()
		// Centred, not scrollIntoView: that would also scroll the page, and only as far as the edge.
		if (i.left < s.left || i.right > s.right) strip.scrollLeft += i.left - s.left - (s.width - i.width) / 2
	}, [route])
	return nav
}

export function Layout({ route, children }: { route: string; children: ComponentChildren }) {
	const { user, account, signOut } = useSession()
	const nav = useCurrentInView(route)
	// Signed in (or following another tab's sign-in): the form that held focus is gone and the browser left it on
	// <body>, so a keyboard user's next Tab would start over at the skip link. The page takes it instead.
	useEffect(() => {
		if (!document.activeElement || document.activeElement === document.body) document.getElementById('main')?.focus({ preventScroll: true })
	}, [])
	return (
		<div class="shell">
			<a class="skip-link" href="#main">
				Skip to content
			</a>
			<header class="topbar">
				<div class="topbar-inner">
					<a class="brand" href="/console/tokens" onClick={linkClick('/tokens')}>
						<Logo />
						<span>Switchboard</span>
					</a>
					<div class="topbar-right">
						<div class="balance" title={`Balance of the account “${account.name}”`}>
							<span class="balance-label">Balance</span>
							<strong data-testid="balance" aria-live="polite">
								{usd(account.balance)}
							</strong>
						</div>
						<a class="user-link" href="/console/account" onClick={linkClick('/account')} aria-current={route === '/account' ? 'page' : undefined}>
							<span class="avatar" aria-hidden="true">
								{user.username.slice(0, 1).toUpperCase()}
							</span>
							<span class="user-name">{user.username}</span>
						</a>
						<button type="button" class="btn btn-ghost btn-sm" onClick={signOut}>
							Sign out
						</button>
					</div>
				</div>
			</header>
			<div class="frame">
				<nav class="sidenav" aria-label="Console" ref={nav}>
					<ul>
						{MAIN.map((i) => (
							<NavLink key={i.route} item={i} route={route} />
						))}
					</ul>
					{user.is_admin && (
						<>
							<p class="nav-section" id="nav-admin">
								Administration
							</p>
							<ul aria-labelledby="nav-admin">
								{ADMIN.map((i) => (
									<NavLink key={i.route} item={i} route={route} />
								))}
							</ul>
						</>
					)}
				</nav>
				<main class="page" id="main" tabIndex={-1}>
					{children}
				</main>
			</div>
		</div>
	)
}
