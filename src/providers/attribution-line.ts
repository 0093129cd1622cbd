/**
 * Claude Code's attribution line: the first block of its system prompt, `x-anthropic-billing-header: cc_version=…;
 * cc_entrypoint=…;`, which Anthropic's API reads. Bedrock refuses a system prompt holding it, 400 ValidationException
 * "x-anthropic-billing-header is a reserved keyword and may not be used in the system prompt." (reported since Claude
 * Code 2.1.15: github.com/anthropics/claude-code/issues/24168, github.com/musistudio/claude-code-router/issues/1161), so
 * the line is left out of what goes to Bedrock; elsewhere it is plain text and goes as sent.
 * @module
 */

const LINE = /^x-anthropic-billing-header:.*(?:\r?\n|$)/gm

const without = (text: string) => text.replace(LINE, '')

/**
 * `body.system` without the attribution line: a text block that held only it is dropped (an empty text block is
 * refused), one holding more keeps the rest. Returns whether it changed `body`.
 */
export function dropAttributionLine(body: Record<string, unknown>): boolean {
	const system = body.system
	if (typeof system === 'string') {
		const rest = without(system)
		if (rest === system) return false
		if (rest.trim()) body.system = rest
		else delete body.system
		return true
	}
	if (!Array.isArray(system)) return false
	let changed = false
	const kept = system.flatMap((b: { type?: unknown; text?: unknown }) => {
		if (b?.type !== 'text' || typeof b.text !== 'string') return [b]
		const rest = without(b.text)
		if (rest === b.text) return [b]
		changed = true
		return rest.trim() ? [{ ...b, text: rest }] : []
	})
	if (!changed) return false
	if (kept.length) body.system = kept
	else delete body.system
	return true
}
