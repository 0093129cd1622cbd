/** A list shown a page at a time in the browser (the API answered it whole): the page's slice and its pager. */
import { useEffect, useState } from 'preact/hooks'
import { Button } from './ui'

/** The page of `items` shown, of `size` each; back to the first page whenever `resetOn` changes (a new search). */
export function usePaged<T>(items: T[], size: number, resetOn: unknown) {
	const [page, setPage] = useState(1)
	useEffect(() => setPage(1), [resetOn])
	const pages = Math.max(1, Math.ceil(items.length / size))
	// A deletion may leave the last page empty: show the one before it.
	const shown = Math.min(page, pages)
	return { items: items.slice((shown - 1) * size, shown * size), page: shown, pages, setPage }
}

/** "← Newer · Page 2 of 3 · Older →" for a newest-first list; nothing when it fits on one page. */
export function ListPager({ page, pages, setPage }: { page: number; pages: number; setPage: (n: number) => void }) {
	if (pages < 2) return null
	return (
		<nav class="pager" aria-label="Pages">
			<Button disabled={page < 2} onClick={() => setPage(page - 1)}>
				← Newer
			</Button>
			<span class="muted">
				Page {page} of {pages}
			</span>
			<Button disabled={page >= pages} onClick={() => setPage(page + 1)}>
				Older →
			</Button>
		</nav>
	)
}
