/** Tokens: the account's API keys, with reveal (eye), copy, create, edit and delete. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, messageOf, query } from '../api'
import { AccountPicker } from '../components/account-picker'
import { AddButton, DeleteButton, EditButton } from '../components/actions'
import { CopyButton } from '../components/copy-button'
import { ListPager } from '../components/list-pager'
import { DataTable } from '../components/data-table'
import { EyeIcon, EyeOffIcon } from '../components/icons'
import { Badge, Button, DateTime, IconButton, PageHeader, TextField, statusTone } from '../components/ui'
import { useDialogs, useLoad } from '../hooks'
import { isolated, relative, tokens, usd } from '../lib/format'
import { addressAccount, addressCursors, pageTurner, usePageAddress } from '../page-address'
import { useSession } from '../session'
import type { Token, TokenPage } from '../types'
import { CreateTokenModal, CreatedTokenModal, DeleteTokenModal, EditTokenModal } from './token-dialogs'

/** Keys per page of the Tokens table. */
const PAGE_SIZE = 25

/** Where the history entry keeps the newer pages' cursors (page-address.ts). */
const CURSORS = 'tokenCursors'

type Dialog = { kind: 'create' } | { kind: 'created'; token: Token; secret: string } | { kind: 'edit'; token: Token } | { kind: 'delete'; token: Token }

const fetchKey = async (id: number) => (await api<{ key: string }>('GET', `/api/tokens/${id}/key`)).key

/** @example perMinute(1, 'request') === '1 request/min'; perMinute(10000, 'token') === '10,000 tokens/min' */
const perMinute = (n: number, unit: string) => `${tokens(n)} ${unit}${n === 1 ? '' : 's'}/min`

/** Allowed models named in a row before the rest are counted: the full list is in the Edit dialog. */
const MODELS_SHOWN = 3

/**
 * The key's other limits, under its spend: a key refused 429 or 403 model_not_allowed shows why. Nothing for a key
 * without any, so the common row stays one line.
 */
function KeyLimits({ t }: { t: Token }) {
	const models = t.allowed_models
	if (t.rpm_limit === null && t.tpm_limit === null && models === null) return null
	const more = models ? models.length - MODELS_SHOWN : 0
	return (
		<ul class="key-limits muted small" data-testid="key-limits">
			{t.rpm_limit !== null && <li>{perMinute(t.rpm_limit, 'request')}</li>}
			{t.tpm_limit !== null && <li>{perMinute(t.tpm_limit, 'token')}</li>}
			{models && (
				<li title={more > 0 ? models.join(', ') : undefined}>
					Models: {models.length ? models.slice(0, MODELS_SHOWN).join(', ') : 'none'}
					{more > 0 && ` and ${more} more`}
				</li>
			)}
		</ul>
	)
}

function SpendCell({ t }: { t: Token }) {
	if (t.spend_limit === null)
		return (
			<>
				<span>
					{usd(t.spent)} <span class="muted">/ no limit</span>
				</span>
				<KeyLimits t={t} />
			</>
		)
	const pct = t.spend_limit > 0 ? Math.min(100, (t.spent / t.spend_limit) * 100) : 100
	// Whole percents, as the label says: the raw share reached screen readers as aria-valuenow="0.00030000000000000003".
	const shown = Math.round(pct)
	return (
		<div class="spend">
			<span>
				{usd(t.spent)} <span class="muted">/ {usd(t.spend_limit)}</span>
			</span>
			<progress class={pct >= 100 ? 'full' : pct >= 80 ? 'high' : ''} max={100} value={shown} aria-label={`${shown}% of the limit spent`} />
			<KeyLimits t={t} />
		</div>
	)
}

/**
 * The key's state as its calls meet it: the API says `active` for a key whose spend has reached its limit, yet every
 * call with it is refused (402) until the limit is raised.
 */
const shownStatus = (t: Token) => (t.status === 'active' && t.spend_limit !== null && t.spent >= t.spend_limit ? 'limit reached' : t.status)

export function TokensPage() {
	const { account, user } = useSession()
	const [accountId, setAccountId] = useState(() => addressAccount(new URLSearchParams(location.search), account.id, user.is_admin))
	// Searched and paged by the server: an account may have more keys than one answer holds.
	const [search, setSearch] = useState(() => new URLSearchParams(location.search).get('search') ?? '')
	const [cursors, setCursors] = useState(() => addressCursors(CURSORS))
	const cursor = cursors[cursors.length - 1]
	// Kept in the address, as on the Usage page: a reload or a link shows the same keys, and Back the page before.
	const turning = usePageAddress({
		route: '/tokens',
		stateKey: CURSORS,
		params: { account_id: accountId === account.id ? undefined : accountId, search: search.trim() },
		cursors,
		restore: () => {
			const q = new URLSearchParams(location.search)
			setAccountId(addressAccount(q, account.id, user.is_admin))
			setSearch(q.get('search') ?? '')
			setCursors(addressCursors(CURSORS))
		},
	})
	// Each answer carries the cursors that led to it: the pager names the page whose rows are shown, not the one asked
	// for, and turns from it (page 1's next cursor is not page 2's while page 2 loads).
	const list = useLoad(
		async () => ({ ...(await api<TokenPage>('GET', `/api/tokens${query({ account_id: accountId, search: search.trim(), limit: PAGE_SIZE, cursor })}`)), cursors }),
		[accountId, search, cursor],
	)
	const shown = list.data?.cursors ?? [undefined]
	// Keys spend outside the console: when the balance above, re-read every 20 s, has moved, so has what the keys
	// spent; else the header would show the money gone while the key that spent it still read $0.00.
	const mounted = useRef(false)
	useEffect(() => {
		if (mounted.current) list.reload()
		mounted.current = true
	}, [account.balance])
	// A deletion may leave the last page empty: show the one before it.
	useEffect(() => {
		if (list.data?.data.length === 0 && shown.length > 1) setCursors(shown.slice(0, -1))
	}, [list.data])
	const dialog = useDialogs<Dialog>(list.reload)
	const [revealed, setRevealed] = useState<Record<number, string>>({})
	const [rowError, setRowError] = useState<string>()
	const total = list.data?.total ?? 0
	const page = shown.length
	const turn = pageTurner({ shown, next: list.data?.next_cursor, cursors, setCursors, list, turning })
	const startOver = <T,>(set: (v: T) => void) => (v: T) => {
		set(v)
		setCursors([undefined])
	}

	const toggle = async (t: Token) => {
		setRowError(undefined)
		if (revealed[t.id]) {
			const { [t.id]: _, ...rest } = revealed
			setRevealed(rest)
			return
		}
		try {
			const key = await fetchKey(t.id)
			setRevealed((r) => ({ ...r, [t.id]: key }))
		} catch (e) {
			setRowError(`Could not reveal “${t.name}”: ${messageOf(e)}`)
		}
	}
	const create = () => dialog.show({ kind: 'create' })
	const { open } = dialog

	return (
		<>
			<PageHeader title="Tokens" subtitle="API keys for the gateway. Send one as Authorization: Bearer sk-…" actions={<AddButton label="Create token" onClick={create} />} />
			<AccountPicker value={accountId} onValue={startOver(setAccountId)} />
			{(total > PAGE_SIZE || search) && (
				<div class="toolbar">
					<TextField label="Search keys" value={search} onValue={startOver(setSearch)} type="search" autoComplete="off" placeholder="Name, or part of the key" />
				</div>
			)}
			<DataTable
				loaded={list}
				label="Tokens"
				columns={['Name', 'Key', 'Created', 'Expires', 'Spent / limit', 'Status', 'Last used']}
				actions
				errors={[rowError]}
				empty={
					search.trim() ? (
						<p>No key matches “{search.trim()}”.</p>
					) : (
						<>
							<p>No tokens yet.</p>
							<Button variant="primary" onClick={create}>
								Create your first token
							</Button>
						</>
					)
				}
				row={(t) => {
					const full = revealed[t.id]
					return (
						<tr key={t.id} data-token={t.name}>
							<th scope="row" data-label="Name">
								{t.name}
							</th>
							<td data-label="Key">
								<div class="key-cell">
									<code class={`key${full ? ' key-full' : ''}`} data-testid="token-key">
										{full ?? t.key_hint}
									</code>
									<IconButton label={`${full ? 'Hide' : 'Show'} key of ${t.name}`} pressed={Boolean(full)} onClick={() => toggle(t)}>
										{full ? <EyeOffIcon /> : <EyeIcon />}
									</IconButton>
									<CopyButton compact label={`Copy key of ${t.name}`} text={() => full ?? fetchKey(t.id)} />
								</div>
							</td>
							<td data-label="Created" title={t.created_at}>
								<DateTime iso={t.created_at} />
							</td>
							<td data-label="Expires" title={t.expires_at ? relative(t.expires_at) : undefined}>
								{t.expires_at ? <DateTime iso={t.expires_at} /> : 'Never'}
							</td>
							<td data-label="Spent / limit">
								<SpendCell t={t} />
							</td>
							<td data-label="Status">
								<Badge tone={statusTone(shownStatus(t))}>{shownStatus(t)}</Badge>
							</td>
							<td data-label="Last used" title={t.last_used_at ?? undefined}>
								{relative(t.last_used_at)}
							</td>
							<td class="actions">
								<EditButton name={t.name} onClick={() => dialog.show({ kind: 'edit', token: t })} />
								<DeleteButton name={t.name} onClick={() => dialog.show({ kind: 'delete', token: t })} />
							</td>
						</tr>
					)
				}}
			/>
			<ListPager page={page} pages={Math.max(page, Math.ceil(total / PAGE_SIZE))} setPage={turn} loading={list.loading && Boolean(list.data)} error={list.error} />
			{open?.kind === 'create' && (
				<CreateTokenModal
					accountId={accountId}
					onClose={dialog.close}
					onCreated={(token, secret) => {
						dialog.show({ kind: 'created', token, secret })
						list.reload()
					}}
				/>
			)}
			{open?.kind === 'created' && <CreatedTokenModal token={open.token} secret={open.secret} onClose={dialog.close} />}
			{open?.kind === 'edit' && <EditTokenModal token={open.token} onClose={dialog.close} onSaved={() => dialog.done('Token saved')} />}
			{open?.kind === 'delete' && <DeleteTokenModal token={open.token} onClose={dialog.close} onDeleted={() => dialog.done(`Deleted “${isolated(open.token.name)}”`)} />}
		</>
	)
}
