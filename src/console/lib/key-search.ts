/** Telling keys of one name apart wherever the console names a key (the server finds them: `GET /api/tokens?search=`). */

type KeyFields = { name: string; key_hint: string }

/**
 * Labels for a list of keys: the name, and where another key has the same name, its masked key too (`laptop ·
 * sk-AbCd…wxyz`), so a key filter or a usage row says which of the two it is.
 * @example keyLabels([{ id: 1, name: 'ci', key_hint: 'sk-a…b' }]).get(1) === 'ci'
 */
export function keyLabels(list: Array<KeyFields & { id: number }>): Map<number, string> {
	const seen = new Map<string, number>()
	for (const t of list) seen.set(t.name, (seen.get(t.name) ?? 0) + 1)
	return new Map(list.map((t) => [t.id, (seen.get(t.name) ?? 0) > 1 ? `${t.name} · ${t.key_hint}` : t.name]))
}
