/** The pager of a list the server answers a page at a time. */
import { Button } from './ui'

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
