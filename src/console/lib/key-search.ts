/** Finding a key on the Tokens page, and telling keys of one name apart wherever the console names a key. */

type KeyFields = { name: string; key_hint: string }

/**
 * Whether a key matches the Tokens page's search: part of its name, part of the masked key the list shows
 * (`sk-AbCd…wxyz`), or the whole key pasted in ("which of my keys is this?"). Blank matches every key.
 * @example keyMatches({ name: 'laptop', key_hint: 'sk-AbCd…wxyz' }, 'wxyz') === true
 */
export function keyMatches(t: KeyFields, text: string): boolean {
	const q = text.trim()
	if (!q) return true
	const lower = q.toLowerCase()
	if (t.name.toLowerCase().includes(lower)) return true
	const [head = '', tail = ''] = t.key_hint.split('…')
	// The hint keeps a key's first and last characters: a whole key starts and ends with them (keys are case-sensitive).
	if (q.startsWith('sk-') && q.length > t.key_hint.length && q.startsWith(head) && q.endsWith(tail)) return true
	return head.toLowerCase().includes(lower) || tail.toLowerCase().includes(lower)
}

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
