/** The frame of every signed-in page: top bar with the balance, navigation, and the page itself. */
import type { ComponentChildren } from 'preact'
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

export function Layout({ route, children }: { route: string; children: ComponentChildren }) {
	const { user, account, signOut } = useSession()
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
				<nav class="sidenav" aria-label="Console">
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
