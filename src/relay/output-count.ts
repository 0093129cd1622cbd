/** Output tokens of a canonical response, counted locally (for upstreams that report none). */
import type { ChatResponse } from '../core/ir'
import { countText } from './estimate'

export function countOutputText(r: ChatResponse): number {
	let text = ''
	for (const p of r.content) {
		if (p.type === 'text' || p.type === 'thinking') text += p.text
		else if (p.type === 'tool_call') text += p.name + JSON.stringify(p.input)
	}
	return countText(text)
}
