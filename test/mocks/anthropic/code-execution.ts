/**
 * The code execution tool (https://platform.claude.com/docs/en/agents-and-tools/tool-use/code-execution-tool) as the
 * mock runs it. Offered (`code_execution_20250825`, beta `code-execution-2025-08-25`; or `code_execution_20250522`,
 * beta `code-execution-2025-05-22`; refused 400 without its beta) and asked for with `#chart` in the last user text, the
 * model runs one command that saves `chart.png`: the answer opens with a `server_tool_use` block and its result
 * (`bash_code_execution_tool_result` → `content: {type: 'bash_code_execution_result', stdout, stderr, return_code,
 * content: [{type: 'bash_code_execution_output', file_id}]}`; for the older version `code_execution_tool_result` →
 * `code_execution_result` → `code_execution_output`), the file goes to this key's Files store (downloadable, as files
 * the tool writes are), and the answer names its container (`container: {id, expires_at, skills: null}`). A request
 * naming a `container` (`'container_…'` or `{id}`) reuses it; one this key never made is 404 `not_found_error`.
 * @module
 */
import { asArr, asObj, type Obj } from '../shared/json'
import type { Reply } from '../shared/reply'
import { stableId } from '../shared/text'
import { anthropicError, invalid } from './errors'
import type { FileStore } from './files'

/** The containers this key's code ran in. */
export type ContainerStore = Set<string>

/** What the code execution tool added to an answer: blocks before the model's text, and the container. */
export type CodeRun = { blocks: Obj[]; container: Obj | null }

const BETAS: Record<string, string> = { code_execution_20250825: 'code-execution-2025-08-25', code_execution_20250522: 'code-execution-2025-05-22' }

/** The bytes of the chart the code saves (a PNG signature, then a marker tests can compare). */
export const CHART_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new TextEncoder().encode('mock chart')])

const CONTAINER_HOURS = 1

function namedContainer(c: unknown): string | undefined {
	if (typeof c === 'string') return c
	const id = asObj(c)?.id
	return typeof id === 'string' ? id : undefined
}

/**
 * Runs the code execution tool for a Messages body: undefined when the body neither offers the tool nor names a
 * container, a refusal, or what the answer gains.
 */
export function runCode(b: Obj, lastUserText: string, headers: Headers, files: FileStore, containers: ContainerStore): CodeRun | { refused: Reply } | undefined {
	const tools = asArr(b.tools).map(asObj)
	const at = tools.findIndex((t) => typeof t?.type === 'string' && t.type.startsWith('code_execution_'))
	const named = namedContainer(b.container)
	if (at < 0 && named === undefined) return undefined
	const type = at < 0 ? undefined : String(tools[at]!.type)
	const beta = type && BETAS[type]
	if (type && !beta) return { refused: invalid(`tools.${at}: Input tag '${type}' found using 'type' does not match any of the expected tags`) }
	const betas = (headers.get('anthropic-beta') ?? '').split(',').map((s) => s.trim())
	if (beta && !betas.includes(beta)) return { refused: invalid(`tools.${at}.${type}: the code execution tool is in beta: send the header anthropic-beta: ${beta}`) }
	if (named !== undefined && !containers.has(named)) return { refused: anthropicError(404, `container: Container not found: ${named}`) }
	const runs = type !== undefined && lastUserText.includes('#chart')
	if (!runs && named === undefined) return { blocks: [], container: null }
	const id = named ?? `container_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
	containers.add(id)
	const container = { id, expires_at: new Date(Date.now() + CONTAINER_HOURS * 3_600_000).toISOString(), skills: null }
	return { blocks: runs ? chartBlocks(type, files, lastUserText) : [], container }
}

/** The tool call that saves the chart and its result naming the file, which is stored downloadable. */
function chartBlocks(type: string, files: FileStore, seed: string): Obj[] {
	const fileId = `file_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
	files.set(fileId, {
		meta: { id: fileId, type: 'file', filename: 'chart.png', mime_type: 'image/png', size_bytes: CHART_BYTES.length, created_at: new Date().toISOString(), downloadable: true },
		bytes: new Uint8Array(CHART_BYTES),
	})
	const toolUseId = stableId('srvtoolu_', seed)
	const bash = type === 'code_execution_20250825'
	const result = { stdout: 'saved chart.png\n', stderr: '', return_code: 0 }
	if (bash)
		return [
			{ type: 'server_tool_use', id: toolUseId, name: 'bash_code_execution', input: { command: 'python plot.py' } },
			{ type: 'bash_code_execution_tool_result', tool_use_id: toolUseId, content: { type: 'bash_code_execution_result', ...result, content: [{ type: 'bash_code_execution_output', file_id: fileId }] } },
		]
	return [
		{ type: 'server_tool_use', id: toolUseId, name: 'code_execution', input: { code: "plt.savefig('chart.png')" } },
		{ type: 'code_execution_tool_result', tool_use_id: toolUseId, content: { type: 'code_execution_result', ...result, content: [{ type: 'code_execution_output', file_id: fileId }] } },
	]
}
