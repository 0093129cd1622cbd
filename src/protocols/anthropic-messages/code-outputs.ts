/**
 * What Claude's code execution tool leaves with the vendor key that ran it
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool): the files the code wrote, named
 * in its tool results (`bash_code_execution_tool_result` / `code_execution_tool_result` → `content.content[]`
 * `{type: 'bash_code_execution_output' | 'code_execution_output', file_id}`, downloadable with the Files API), and the
 * container it ran in (the answer's `container: {id, expires_at}`; in a stream on `message_start` or `message_delta`),
 * which a later request names to reuse. Read only from answers to requests that offer the tool.
 * @module
 */
import type { SseFrame } from '../../core/sse'

export type CodeOutputs = {
	/** File ids the code wrote. */
	files: string[]
	/** The container the code ran in. */
	container?: { id: string; expires_at?: string }
}

/**
 * Whether a Messages request offers the code execution tool (`code_execution_20250522`, `code_execution_20250825`, …),
 * told by the parsed body's `tools` (a few entries), not by a search of its text: JavaScriptCore's substring search
 * took 13–50 µs on a coding agent's 90 KB turn.
 * @example offersCodeExecution({ tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] }) === true
 */
export function offersCodeExecution(body: Record<string, unknown>): boolean {
	const tools = body.tools
	if (!Array.isArray(tools)) return false
	for (const t of tools) if (typeof (t as { type?: unknown } | null)?.type === 'string' && (t as { type: string }).type.startsWith('code_execution_')) return true
	return false
}

/** The container id a request names to reuse (`container: 'container_…'` or `{id, skills}`); undefined for a new one. */
export function namedContainer(container: unknown): string | undefined {
	if (typeof container === 'string') return container || undefined
	const id = (container as { id?: unknown } | null | undefined)?.id
	return typeof id === 'string' && id ? id : undefined
}

/** Adds the file ids of one content block, when it is a code execution tool result that wrote files. */
function addBlockFiles(block: unknown, files: string[]) {
	const b = block as { type?: unknown; content?: { content?: unknown } } | null
	if (typeof b?.type !== 'string' || !b.type.endsWith('code_execution_tool_result')) return
	const outputs = b.content?.content
	if (!Array.isArray(outputs)) return
	for (const o of outputs) {
		const out = o as { type?: unknown; file_id?: unknown } | null
		if (typeof out?.type === 'string' && out.type.endsWith('code_execution_output') && typeof out.file_id === 'string' && !files.includes(out.file_id)) files.push(out.file_id)
	}
}

function containerOf(v: unknown): CodeOutputs['container'] {
	const c = v as { id?: unknown; expires_at?: unknown } | null | undefined
	if (typeof c?.id !== 'string' || !c.id) return undefined
	return typeof c.expires_at === 'string' ? { id: c.id, expires_at: c.expires_at } : { id: c.id }
}

/**
 * The files and container a whole (non-streamed) answer names; none for a body that is not a message.
 * @example codeOutputsOf({ content: [{ type: 'bash_code_execution_tool_result', content: { content: [{ type: 'bash_code_execution_output', file_id: 'file_1' }] } }], container: { id: 'container_1' } })
 * // { files: ['file_1'], container: { id: 'container_1' } }
 */
export function codeOutputsOf(message: unknown): CodeOutputs {
	const m = message as { content?: unknown; container?: unknown } | null
	const files: string[] = []
	if (Array.isArray(m?.content)) for (const block of m.content) addBlockFiles(block, files)
	const container = containerOf(m?.container)
	return container ? { files, container } : { files }
}

/**
 * Reads a streamed answer's frames as they are relayed: a tool result arrives whole in its `content_block_start`, the
 * container on `message_start` or `message_delta`. Only frames that can name one are parsed. `take()` hands over
 * what was found since its last call, so each is recorded before the frame naming it goes out.
 */
export class CodeOutputScanner {
	private files: string[] = []
	private container: CodeOutputs['container'] = undefined
	private readonly seen = new Set<string>()

	onFrame(f: SseFrame) {
		if (f.event === 'content_block_start') {
			if (f.data.includes('code_execution_tool_result')) this.read(f.data, (d) => addBlockFiles((d as { content_block?: unknown }).content_block, this.files))
		} else if ((f.event === 'message_start' || f.event === 'message_delta') && f.data.includes('"container"')) {
			this.read(f.data, (d) => {
				const o = d as { message?: { container?: unknown }; delta?: { container?: unknown } }
				const c = containerOf(f.event === 'message_start' ? o.message?.container : o.delta?.container)
				if (c && !this.seen.has(c.id)) this.container = c
			})
		}
	}

	private read(data: string, use: (d: unknown) => void) {
		try {
			use(JSON.parse(data))
		} catch {
			// A frame the relay forwards as it is; nothing is recorded from it.
		}
	}

	/** What was found since the last call, each once; undefined when nothing new was. */
	take(): CodeOutputs | undefined {
		const files = this.files.filter((id) => !this.seen.has(id))
		const container = this.container
		this.files = []
		this.container = undefined
		if (!files.length && !container) return undefined
		for (const id of files) this.seen.add(id)
		if (container) this.seen.add(container.id)
		return container ? { files, container } : { files }
	}
}
