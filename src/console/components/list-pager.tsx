/** The pager of a list the server answers a page at a time. */
import type { ComponentChildren, Ref } from 'preact'
import { useLayoutEffect, useRef } from 'preact/hooks'
import { Button } from './ui'

/**
 * For a pager's `<nav>`: the button pressed to reach the last (or first) page is then disabled, and the browser drops
 * its focus to <body>; focus goes to the pager's other button instead, where a keyboard user can turn back.
 */
export function usePagerFocus(): { ref: Ref<HTMLElement>; onFocusIn: (e: FocusEvent) => void } {
	const nav = useRef<HTMLElement>(null)
	const pressed = useRef<HTMLButtonElement | null>(null)
	useLayoutEffect(() => {
		const el = pressed.current
		if (!el?.disabled || (document.activeElement !== el && document.activeElement !== document.body && document.activeElement)) return
		nav.current?.querySelector<HTMLButtonElement>('button:not(:disabled)')?.focus()
	})
	return { ref: nav, onFocusIn: (e) => (pressed.current = e.target instanceof HTMLButtonElement ? e.target : null) }
}

/**
 * "← Newer · Page 2 of 3 · Older →" for a newest-first list; no buttons when it fits on one page. `pages` is the count
 * when the server says it; a list paged by cursor says only whether there are `more` ("Page 2"). `page` is the page
 * whose rows are shown: while another loads, the pager says so rather than name a page the rows are not yet; when it
 * failed, says that beside the button pressed (the table's alert may be a screen above). `children` (a page-size
 * select) stay when the buttons do not; with neither, nothing is shown.
 */
export function ListPager({
	page,
	pages,
	more,
	setPage,
	loading,
	error,
	children,
}: { page: number; pages?: number; more?: boolean; setPage: (n: number) => void; loading?: boolean; error?: string; children?: ComponentChildren }) {
	const focus = usePagerFocus()
	const last = pages ?? (more ? page + 1 : page)
	const paged = page > 1 || last > 1
	if (!paged && !children) return null
	return (
		<nav class="pager" aria-label="Pages" aria-busy={loading ? 'true' : undefined} {...focus}>
			{paged && (
				<>
					<Button disabled={page < 2} onClick={() => setPage(page - 1)}>
						← Newer
					</Button>
					<span class="muted">
						Page {page}
						{pages !== undefined && ` of ${pages}`}
					</span>
					<Button disabled={page >= last} onClick={() => setPage(page + 1)}>
						Older →
					</Button>
				</>
			)}
			<PagerStatus loading={loading} error={error} />
			{children}
		</nav>
	)
}

/** Beside a pager: "Loading…" while another page loads, or why it did not. */
export function PagerStatus({ loading, error }: { loading?: boolean; error?: string }) {
	return (
		<span class="muted pager-status" role="status">
			{loading ? (
				<>
					<span class="spinner" aria-hidden="true" /> Loading…
				</>
			) : (
				error && <span class="pager-error">Not loaded: {error}</span>
			)}
		</span>
	)
}
