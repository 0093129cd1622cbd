/**
 * A list page's filters and page kept in its address (`…/usage?model=gpt-4o&cursor=…`, `…/tokens?search=ci`), so a
 * reload, a bookmark, a shared link or the Back button shows the same rows. Used by the Usage, Tokens and Accounts
 * pages.
 * @module
 */
import { useEffect, useRef } from 'preact/hooks'
import { query } from './api'

/** The cursors that led to a page: `[undefined]` is the first page, each next cursor one page further. */
export type Cursors = Array<string | undefined>

/**
 * The account the address names (`account_id`): only administrators choose it, so a user's link from one of them
 * opens the user's own.
 * @example addressAccount(new URLSearchParams('account_id=7'), 1, true) === 7
 */
export function addressAccount(q: URLSearchParams, ownAccount: number, admin: boolean): number {
	const account = Number(q.get('account_id'))
	return admin && Number.isSafeInteger(account) && account > 0 ? account : ownAccount
}

/**
 * The page of rows the address names: `cursor` is the page's own (kept so a reload or a link opens it), and the
 * history entry's state, under `stateKey`, keeps the newer pages' cursors for "← Newer" (a link opened afresh knows
 * only the first).
 */
export function addressCursors(stateKey: string): Cursors {
	const cursor = new URLSearchParams(location.search).get('cursor') || undefined
	const saved = (history.state as Record<string, unknown> | null)?.[stateKey]
	if (Array.isArray(saved) && saved.length > 0 && (saved.at(-1) ?? undefined) === cursor) return saved.map((c) => c ?? undefined)
	return cursor ? [undefined, cursor] : [undefined]
}

type AddressOptions = {
	/** The page's route (`/usage`): Back and Forward to another page are the router's, not this page's. */
	route: string
	/** Where the history entry's state keeps the cursors. */
	stateKey: string
	/** The filters as they go in the address; undefined or '' (a default) is left out. */
	params: Record<string, string | number | undefined>
	cursors: Cursors
	/** Sets the page's filters and cursors from the address, after Back or Forward within the page. */
	restore: () => void
}

/**
 * Writes `params` and the page's cursor into the address as they change: a filter replaces the history entry (not
 * one per keystroke), a page turn adds one, so Back returns to the page before. Returns `turning`, to call just
 * before setting the cursors of a page turn.
 */
export function usePageAddress({ route, stateKey, params, cursors, restore }: AddressOptions): () => void {
	const turning = useRef(false)
	useEffect(() => {
		const q = query({ ...params, cursor: cursors[cursors.length - 1] })
		const state = { ...(history.state as object | null), [stateKey]: cursors.map((c) => c ?? null) }
		if (turning.current) history.pushState(state, '', location.pathname + q)
		else if (q !== location.search) history.replaceState(state, '', location.pathname + q)
		turning.current = false
	}, [JSON.stringify(params), cursors])
	// The listener is added once; it calls the latest `restore`, which closes over the page's current session.
	const latest = useRef(restore)
	latest.current = restore
	useEffect(() => {
		const onPop = () => {
			if (location.pathname.endsWith(route)) latest.current()
		}
		window.addEventListener('popstate', onPop)
		return () => window.removeEventListener('popstate', onPop)
	}, [])
	return () => {
		turning.current = true
	}
}

/**
 * The pager's turn to page `n` (1 is the first) of a cursor-paged list (the Tokens and Accounts pages): back along
 * the cursors that led to the page shown, or one page on with its next cursor. The page already asked for is asked
 * again only after it failed (a click while it loads waits for it).
 */
export function pageTurner(o: {
	shown: Cursors
	next: string | null | undefined
	cursors: Cursors
	setCursors: (c: Cursors) => void
	list: { error?: string; loading: boolean; reload: () => void }
	turning: () => void
}): (n: number) => void {
	return (n) => {
		const page = o.shown.length
		const next = n < page ? o.shown.slice(0, n) : o.next ? [...o.shown, o.next] : undefined
		if (!next) return
		if (next.length === o.cursors.length && next[next.length - 1] === o.cursors[o.cursors.length - 1]) {
			if (o.list.error && !o.list.loading) o.list.reload()
		} else {
			o.turning()
			o.setCursors(next)
		}
	}
}
