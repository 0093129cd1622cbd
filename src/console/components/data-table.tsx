/**
 * A page's list as a table: the load error, a spinner until the first answer, the empty state (only when an answer
 * said so: a list that failed to load is not an empty one), then the rows.
 * On a phone, `cards-on-phone` turns each row into a card labelled by the cells' `data-label`.
 */
import type { ComponentChildren, JSX } from 'preact'
import { useLayoutEffect, useRef } from 'preact/hooks'
import type { Loaded } from '../hooks'
import { Alert, Empty, Loading } from './ui'

/** A column heading; `num` right-aligns it like its figures. */
export type Column = string | { label: string; num: true }

type DataTableProps<T> = {
	loaded: Loaded<{ data: T[] }>
	/** The table's accessible name. */
	label: string
	columns: Column[]
	/** Adds the last, visually unlabelled column of row buttons. */
	actions?: boolean
	/** Content of the empty state (no rows, or none passes `filter`). */
	empty: ComponentChildren
	/** Further errors in words, shown under the load error (a failed row action, …). */
	errors?: Array<string | undefined>
	filter?: (item: T) => boolean
	row: (item: T) => JSX.Element
}

/** The list of `loaded.data.data`, one `row` each, under headings from `columns`. */
export function DataTable<T>({ loaded, label, columns, actions, empty, errors = [], filter, row }: DataTableProps<T>) {
	const all = loaded.data?.data ?? []
	const items = filter ? all.filter(filter) : all
	// A row that held focus may leave (deleted, its dialog having given focus back to its button): the browser would
	// drop focus to <body> (WCAG 2.4.3), so it goes to the table, or to the page once no row is left.
	const lastFocused = useRef<Element | null>(null)
	const table = useRef<HTMLTableElement>(null)
	useLayoutEffect(() => {
		const el = lastFocused.current
		if (!el || el.isConnected) return
		lastFocused.current = null
		if (document.activeElement && document.activeElement !== document.body) return
		;(table.current ?? document.getElementById('main'))?.focus({ preventScroll: true })
	})
	return (
		<>
			{[loaded.error, ...errors].map((e, i) => e && <Alert key={i}>{e}</Alert>)}
			{loaded.loading && !loaded.data ? (
				<Loading />
			) : loaded.error && !loaded.data ? null : items.length === 0 ? (
				<Empty>{empty}</Empty>
			) : (
				<div class="card table-wrap" onFocusIn={(e) => (lastFocused.current = e.target as Element)}>
					<table ref={table} tabIndex={-1} class="table cards-on-phone" aria-label={label} aria-busy={loaded.loading ? 'true' : undefined}>
						<thead>
							<tr>
								{columns.map((c) =>
									typeof c === 'string' ? (
										<th key={c} scope="col">
											{c}
										</th>
									) : (
										<th key={c.label} scope="col" class="num">
											{c.label}
										</th>
									),
								)}
								{actions && (
									<th scope="col">
										<span class="sr-only">Actions</span>
									</th>
								)}
							</tr>
						</thead>
						<tbody>{items.map(row)}</tbody>
					</table>
				</div>
			)}
		</>
	)
}

/** A right-aligned figure; `label` names it when the row is shown as a card on a phone. */
export function NumCell({ label, children }: { label: string; children: ComponentChildren }) {
	return (
		<td data-label={label} class="num">
			{children}
		</td>
	)
}
