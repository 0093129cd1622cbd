/**
 * OpenAI's cursor list page (`object: "list"`, `data`, `first_id`, `last_id`, `has_more`), as every list route that
 * pages by `after` answers it: conversations' items, a response's input items, stored chat completions and videos.
 * @module
 */

export type ListPage<T> = { object: 'list'; data: T[]; first_id: string | null; last_id: string | null; has_more: boolean }

/** The page of `data`, its ends named by `idOf` (an item's `id` unless told otherwise). */
export function listPage<T>(data: T[], hasMore: boolean, idOf: (item: T) => string = (item) => (item as { id: string }).id): ListPage<T> {
	return { object: 'list', data, first_id: data.length ? idOf(data[0]!) : null, last_id: data.length ? idOf(data.at(-1)!) : null, has_more: hasMore }
}
