/** Usage: spend per day as a chart, then the requests themselves, filterable by key, model and dates, paged. */
import { useState } from 'preact/hooks'
import { api, query } from '../api'
import { AccountPicker } from '../components/account-picker'
import { DataTable, NumCell } from '../components/data-table'
import { ListPager } from '../components/list-pager'
import { RefreshIcon } from '../components/icons'
import { SpendChart } from '../components/spend-chart'
import { Alert, Badge, Button, DateTime, Endpoint, PageHeader, SelectField, TextField } from '../components/ui'
import { useLoad } from '../hooks'
import { addressAccount, addressCursors, usePageAddress } from '../page-address'
import { fillDays } from '../lib/chart'
import { localDate } from '../lib/expiry'
import { latency, tokens as fmtTokens, usd } from '../lib/format'
import { keyLabels } from '../lib/key-search'
import { useSession } from '../session'
import type { Page, PricedModel, SpendDay, Token, TokenPage, UsageRow } from '../types'

/** The viewer's IANA time zone, e.g. Europe/Paris (undefined where the browser cannot say). */
const viewerZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || undefined

const startOfDay = (d: string) => (d ? new Date(`${d}T00:00:00`).toISOString() : undefined)
const endOfDay = (d: string) => (d ? new Date(`${d}T23:59:59.999`).toISOString() : undefined)

/**
 * Rows that move money without being a call's outcome: a task's refund (tasks/refund.ts) and a background response's
 * reservation charged while it runs (responses/background.ts). Neither is a failure, so neither is shown as one.
 */
const BOOKKEEPING = new Set(['refund', 'background'])

function StatusBadge({ r }: { r: UsageRow }) {
	if (BOOKKEEPING.has(r.end_reason) && r.status < 400) return <Badge tone="info">{r.end_reason}</Badge>
	if (r.status >= 200 && r.status < 300 && r.end_reason === 'ok') return <Badge tone="success">{r.status}</Badge>
	const label = r.end_reason && r.end_reason !== 'ok' ? `${r.status} ${r.end_reason.replace(/_/g, ' ')}` : String(r.status)
	return <Badge tone={r.status >= 400 ? 'danger' : 'warning'}>{label}</Badge>
}

/**
 * The input's cache split under "in / out": cache reads and writes are billed at their own prices (the Models page
 * lists them), so a cost is checked against the prices only with the split. The full split is in the title.
 */
function CacheSplit({ r }: { r: UsageRow }) {
	if (!r.cached_tokens && !r.cache_write_tokens) return null
	const parts = [r.cached_tokens ? `${fmtTokens(r.cached_tokens)} cached` : '', r.cache_write_tokens ? `${fmtTokens(r.cache_write_tokens)} written` : ''].filter(Boolean)
	const uncached = r.input_tokens - r.cached_tokens - r.cache_write_tokens
	const title = `Input ${fmtTokens(r.input_tokens)}: ${fmtTokens(uncached)} uncached, ${fmtTokens(r.cached_tokens)} read from the cache, ${fmtTokens(r.cache_write_tokens)} written to it; output ${fmtTokens(r.output_tokens)}${r.reasoning_tokens ? ` (${fmtTokens(r.reasoning_tokens)} reasoning)` : ''}`
	return (
		<div class="muted small" data-testid="cache-split" title={title}>
			{/* One line each: the cell does not wrap (figures), and one line of both would widen the table. */}
			{parts.map((p) => (
				<div key={p}>{p}</div>
			))}
		</div>
	)
}

/** Keys the key filter offers at once; past that it offers a search (an account may have many thousands). */
const KEY_OPTIONS = 100

const DAY = /^\d{4}-\d{2}-\d{2}$/
const PER_PAGE = ['25', '50', '100']

/** Where the history entry keeps the newer pages' cursors (page-address.ts). */
const CURSORS = 'usageCursors'

/**
 * The filters the page opens with: those in its address (`…/usage?model=gpt-4o&from=2025-01-01`), so a reload, a
 * bookmark, a shared link or the Back button shows the same rows; else the last 30 days, all keys and models.
 */
function initialFilters(ownAccount: number, admin: boolean) {
	const q = new URLSearchParams(location.search)
	const day = (name: string) => (DAY.test(q.get(name) ?? '') ? q.get(name)! : undefined)
	const defaults = { from: localDate(new Date(Date.now() - 29 * 86_400_000)), to: localDate(new Date()) }
	return {
		defaults,
		accountId: addressAccount(q, ownAccount, admin),
		tokenId: /^\d+$/.test(q.get('token_id') ?? '') ? q.get('token_id')! : '',
		model: q.get('model') ?? '',
		from: day('from') ?? defaults.from,
		to: day('to') ?? defaults.to,
		limit: PER_PAGE.includes(q.get('limit') ?? '') ? q.get('limit')! : '25',
	}
}

export function UsagePage() {
	const { account, user, refreshBalance } = useSession()
	const [start] = useState(() => initialFilters(account.id, user.is_admin))
	const [accountId, setAccountId] = useState(start.accountId)
	const [tokenId, setTokenId] = useState(start.tokenId)
	const [model, setModel] = useState(start.model)
	const [from, setFrom] = useState(start.from)
	const [to, setTo] = useState(start.to)
	const [limit, setLimit] = useState(start.limit)
	const [cursors, setCursors] = useState(() => addressCursors(CURSORS))
	const [tick, setTick] = useState(0)
	const cursor = cursors[cursors.length - 1]
	// Default values are left out of the address, so a bookmarked plain …/usage still opens on the last 30 days tomorrow.
	const turning = usePageAddress({
		route: '/usage',
		stateKey: CURSORS,
		params: {
			account_id: accountId === account.id ? undefined : accountId,
			token_id: tokenId,
			model: model.trim(),
			from: from === start.defaults.from ? undefined : from,
			to: to === start.defaults.to ? undefined : to,
			limit: limit === '25' ? undefined : limit,
		},
		cursors,
		restore: () => {
			const f = initialFilters(account.id, user.is_admin)
			setAccountId(f.accountId)
			setTokenId(f.tokenId)
			setModel(f.model)
			setFrom(f.from)
			setTo(f.to)
			setLimit(f.limit)
			setCursors(addressCursors(CURSORS))
		},
	})
	const turn = (next: Array<string | undefined>) => {
		// The page already asked for: again only after it failed (a click while it loads waits for it).
		if (next.length === cursors.length && next[next.length - 1] === cursor) {
			if (rows.error && !rows.loading) rows.reload()
			return
		}
		turning()
		setCursors(next)
	}
	// An inverted range matches nothing: said as such, rather than as "No requests match these filters".
	const inverted = Boolean(from && to && from > to)

	const filters = { account_id: accountId, token_id: tokenId || undefined, model: model.trim() || undefined, from: startOfDay(from), to: endOfDay(to) }
	const key = JSON.stringify(filters)
	const reset = <T,>(set: (v: T) => void) => (v: T) => {
		set(v)
		setCursors([undefined])
	}

	const [keySearch, setKeySearch] = useState('')
	// Deleted keys are offered too (marked): their usage stays, and is what one looks for after deleting a key.
	const keys = useLoad(() => api<TokenPage>('GET', `/api/tokens${query({ account_id: accountId, search: keySearch.trim(), limit: KEY_OPTIONS, include_deleted: 'true' })}`), [accountId, keySearch])
	// The key filtered by stays offered while a search shows others, as when the address named it.
	const chosen = useLoad(
		() => (tokenId ? api<TokenPage>('GET', `/api/tokens${query({ account_id: accountId, ids: tokenId, include_deleted: 'true' })}`) : Promise.resolve(undefined)),
		[accountId, tokenId],
	)
	const models = useLoad(() => api<{ data: PricedModel[] }>('GET', '/api/pricing'), [])
	// Each page comes with its rows' keys, for their names (deleted ones too), and the cursors that led to it:
	// the pager names and turns from the page shown, not the one still loading.
	const rows = useLoad(async (): Promise<Page<UsageRow> & { keys: Token[]; cursors: Array<string | undefined> }> => {
		if (inverted) return { data: [], next_cursor: null, keys: [], cursors }
		const page = await api<Page<UsageRow>>('GET', `/api/usage${query({ ...filters, limit, cursor })}`)
		const ids = [...new Set(page.data.flatMap((r) => (r.token_id === null ? [] : [r.token_id])))]
		const named = ids.length ? await api<TokenPage>('GET', `/api/tokens${query({ account_id: accountId, ids: ids.join(','), include_deleted: 'true' })}`) : undefined
		return { ...page, keys: named?.data ?? [], cursors }
	}, [key, limit, cursor, tick])
	const shown = rows.data?.cursors ?? cursors
	const spend = useLoad(
		// The zone, not today's offset: a range across a change of daylight saving time has days of two offsets.
		() =>
			inverted
				? Promise.resolve({ data: [] })
				: api<{ data: SpendDay[] }>('GET', `/api/console/spend${query({ ...filters, time_zone: viewerZone(), offset_minutes: -new Date().getTimezoneOffset() })}`),
		[key, tick],
	)

	// Names are not unique: two keys called "laptop" are told apart by their masked keys.
	const offered = [...(chosen.data?.data ?? []).filter((c) => !keys.data?.data.some((t) => t.id === c.id)), ...(keys.data?.data ?? [])]
	const shownKeys = [...offered, ...(rows.data?.keys ?? []).filter((r) => !offered.some((t) => t.id === r.id))]
	const names = keyLabels(shownKeys)
	const deleted = new Set(shownKeys.filter((t) => t.status === 'deleted').map((t) => t.id))
	const keyName = (id: number) => {
		const name = names.get(id)
		return name === undefined ? `#${id} (deleted)` : deleted.has(id) ? `${name} (deleted)` : name
	}
	const days = from && to && !inverted ? fillDays(new Date(`${from}T00:00:00`), new Date(`${to}T00:00:00`), spend.data?.data ?? []) : []
	// Figures only from an answer: until one came (or when it failed), not $0.00 and 0 requests.
	const spent = spend.data !== undefined
	const total = (spend.data?.data ?? []).reduce((s, d) => ({ cost: s.cost + d.cost, requests: s.requests + d.requests, tokens: s.tokens + d.input_tokens + d.output_tokens }), { cost: 0, requests: 0, tokens: 0 })
	const refresh = () => {
		setTick((n) => n + 1)
		refreshBalance()
	}

	return (
		<>
			<PageHeader
				title="Usage"
				subtitle="Every request made with this account's keys, newest first."
				actions={
					<Button onClick={refresh}>
						<RefreshIcon /> Refresh
					</Button>
				}
			/>
			<AccountPicker
				value={accountId}
				refresh={tick}
				onValue={reset((id: number) => {
					// A key belongs to one account: kept, another account's key would filter every row away unseen.
					setAccountId(id)
					setTokenId('')
					setKeySearch('')
				})}
			/>
			<form class="card filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
				{((keys.data?.total ?? 0) > KEY_OPTIONS || keySearch) && (
					<TextField label="Search keys" value={keySearch} onValue={setKeySearch} type="search" autoComplete="off" placeholder="Name, or part of the key" />
				)}
				<SelectField label="Key" value={tokenId} onValue={reset(setTokenId)} options={[{ value: '', label: 'All keys' }, ...offered.map((t) => ({ value: String(t.id), label: keyName(t.id) }))]} />
				<TextField label="Model" value={model} onValue={reset(setModel)} list="usage-models" placeholder="All models" />
				<datalist id="usage-models">
					{(models.data?.data ?? []).map((m) => (
						<option key={m.name} value={m.name} />
					))}
				</datalist>
				<TextField label="From" type="date" value={from} onValue={reset(setFrom)} max={to} />
				<TextField label="To" type="date" value={to} onValue={reset(setTo)} min={from} />
			</form>
			{inverted && (
				<Alert>
					“From” ({from}) is after “To” ({to}): no day lies between them. Choose a “From” on or before the “To”.
				</Alert>
			)}
			<section class="card" aria-labelledby="spend-title">
				<div class="card-head">
					<h2 id="spend-title">Spend over time</h2>
					<dl class="stats">
						<div>
							<dt>Spent</dt>
							<dd data-testid="range-spend">{spent ? usd(total.cost) : '—'}</dd>
						</div>
						<div>
							<dt>Requests</dt>
							<dd>{spent ? fmtTokens(total.requests) : '—'}</dd>
						</div>
						<div>
							<dt>Tokens</dt>
							<dd>{spent ? fmtTokens(total.tokens) : '—'}</dd>
						</div>
					</dl>
				</div>
				{spend.error ? <Alert>{spend.error}</Alert> : <SpendChart days={days} />}
			</section>
			<section aria-labelledby="requests-title">
				<h2 id="requests-title" class="section-title">
					Requests
				</h2>
				<DataTable
					loaded={rows}
					label="Requests"
					columns={['Time', 'Key', 'Model', 'Endpoint', { label: 'Tokens in / out', num: true }, { label: 'Cost', num: true }, { label: 'Latency', num: true }, 'Status']}
					empty={inverted ? 'No requests: “From” is after “To”.' : 'No requests match these filters.'}
					row={(r) => (
						<tr key={r.id} title={`Request ${r.request_id}`}>
							<td data-label="Time">
								<DateTime iso={r.created_at} />
							</td>
							<td data-label="Key" class="name">{r.token_id === null ? '—' : keyName(r.token_id)}</td>
							<td data-label="Model">
								<code>{r.model}</code>
							</td>
							<td data-label="Endpoint">
								<Endpoint path={r.endpoint} />
								{r.stream && <span class="muted"> · stream</span>}
								{/* A background response's real usage, settled under its request's id (responses/background.ts). */}
								{r.request_id.endsWith(':settle') && <span class="muted"> · settlement</span>}
							</td>
							<NumCell label="Tokens in / out">
								{fmtTokens(r.input_tokens)} / {fmtTokens(r.output_tokens)}
								<CacheSplit r={r} />
								{r.estimated && (
									<div class="muted small" title="Counted by the gateway: the upstream reported no usage">
										estimated
									</div>
								)}
							</NumCell>
							<NumCell label="Cost">{usd(r.cost)}</NumCell>
							<NumCell label="Latency">{latency(r.latency_ms)}</NumCell>
							<td data-label="Status">
								<StatusBadge r={r} />
							</td>
						</tr>
					)}
				/>
				<ListPager
					page={shown.length}
					more={Boolean(rows.data?.next_cursor)}
					setPage={(n) => (n < shown.length ? turn(shown.slice(0, -1)) : rows.data?.next_cursor && turn([...shown, rows.data.next_cursor]))}
					loading={rows.loading && Boolean(rows.data)}
					error={rows.data && rows.error}
				>
					<SelectField
						label="Per page"
						value={limit}
						onValue={reset(setLimit)}
						options={['25', '50', '100'].map((v) => ({ value: v, label: v }))}
					/>
				</ListPager>
			</section>
		</>
	)
}
