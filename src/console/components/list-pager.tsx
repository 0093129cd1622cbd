/** The pager of a list the server answers a page at a time. */
import type { Ref } from 'preact'
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
 * "← Newer · Page 2 of 3 · Older →" for a newest-first list; nothing when it fits on one page. `page` is the page whose
 * rows are shown: while another loads, the pager says so rather than name a page the rows are not yet; when it failed,
 * says that beside the button pressed (the table's alert may be a screen above).
 */
export function ListPager({ page, pages, setPage, loading, error }: { page: number; pages: number; setPage: (n: number) => void; loading?: boolean; error?: string }) {
	const focus = usePagerFocus()
	if (pages < 2) return null
	return (
		<nav class="pager" aria-label="Pages" aria-busy={loading ? 'true' : undefined} {...focus}>
			<Button disabled={page < 2} onClick={() => setPage(page - 1)}>
				← Newer
			</Button>
			<span class="muted">
				Page {page} of {pages}
			</span>
			<Button disabled={page >= pages} onClick={() => setPage(page + 1)}>
				Older →
			</Button>
			<PagerStatus loading={loading} error={error} />
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
