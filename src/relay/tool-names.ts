/**
 * Tool names an upstream vendor would refuse. OpenAI takes `^[a-zA-Z0-9_-]{1,64}$`, Anthropic the same characters
 * (its docs say up to 64, its API has taken 128), Gemini also dots and colons but only 64 and from a letter or `_`
 * ("Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and
 * dashes, with a maximum length of 64"; https://ai.google.dev/api/caching#FunctionDeclaration), and each answers 400
 * to anything else. So a Gemini client's `weather.get`, an OpenAI client's `7zip_extract` for Gemini, or a Claude
 * Code MCP tool named past 64 characters
 * (`mcp__<server>__<tool>`), goes to a vendor that would refuse it under a name it takes, the same in the tools, the
 * tool choice and the history, and the vendor's calls come back under the client's name.
 * @module
 */
import type { ChatRequest, ChatResponse, Message, ToolChoice } from '../core/ir'
import type { UpstreamCodec } from '../protocols/codec'
import { type FrameDecoder, mapDecoding } from '../protocols/stream-machine'

/** What each vendor takes, the characters it refuses, and how a name must start. OpenAI's rule is used for Anthropic too (64 fits both). */
const RULES: Record<'gemini' | 'other', Rule> = {
	gemini: { ok: /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/, bad: /[^A-Za-z0-9_.:-]/g, lead: /^[A-Za-z_]/ },
	other: { ok: /^[A-Za-z0-9_-]{1,64}$/, bad: /[^A-Za-z0-9_-]/g },
}
type Rule = { ok: RegExp; bad: RegExp; lead?: RegExp }

/** Every tool name the request uses: declared, forced, called and answered in the history. */
function namesOf(ir: ChatRequest): Set<string> {
	const names = new Set<string>()
	for (const t of ir.tools ?? []) names.add(t.name)
	if (ir.toolChoice?.type === 'tool') names.add(ir.toolChoice.name)
	for (const m of ir.messages)
		for (const p of m.content) {
			if (p.type === 'tool_call') names.add(p.name)
			else if (p.type === 'tool_result' && p.name) names.add(p.name)
		}
	return names
}

/**
 * Client name → portable name for each name that is not portable (none: undefined). Unsafe characters become `_`,
 * a name that may not start as it does gets a leading `_`, and a name that would then clash with another gets a
 * numbered suffix.
 * @example portableNames(new Set(['weather.get', 'weather_get'])) // Map { 'weather.get' => 'weather_get_2' }
 */
export function portableNames(names: Set<string>, rule: Rule = RULES.other): Map<string, string> | undefined {
	let out: Map<string, string> | undefined
	const taken = new Set([...names].filter((n) => rule.ok.test(n)))
	for (const name of names) {
		if (rule.ok.test(name)) continue
		const safe = name.replace(rule.bad, '_') || 'tool'
		const base = (rule.lead && !rule.lead.test(safe) ? `_${safe}` : safe).slice(0, 64)
		let candidate = base
		for (let i = 2; taken.has(candidate); i++) candidate = `${base.slice(0, 64 - String(i).length - 1)}_${i}`
		taken.add(candidate)
		;(out ??= new Map()).set(name, candidate)
	}
	return out
}

const ruleOf = (codec: UpstreamCodec): Rule => (codec.name === 'gemini' ? RULES.gemini : RULES.other)

/** Gemini's rule, for callers of `portableNames` that target Gemini. */
export const GEMINI_NAMES = RULES.gemini

function renameRequest(ir: ChatRequest, to: Map<string, string>): ChatRequest {
	const name = (n: string) => to.get(n) ?? n
	const messages: Message[] = ir.messages.map((m) =>
		m.content.some((p) => (p.type === 'tool_call' || p.type === 'tool_result') && p.name !== undefined && to.has(p.name))
			? { ...m, content: m.content.map((p) => (p.type === 'tool_call' || (p.type === 'tool_result' && p.name !== undefined) ? { ...p, name: name(p.name!) } : p)) }
			: m,
	)
	const out: ChatRequest = { ...ir, messages }
	if (ir.tools) out.tools = ir.tools.map((t) => (to.has(t.name) ? { ...t, name: name(t.name) } : t))
	if (ir.toolChoice?.type === 'tool') out.toolChoice = { type: 'tool', name: name(ir.toolChoice.name) } satisfies ToolChoice
	return out
}

function renameResponse(r: ChatResponse, back: Map<string, string>): ChatResponse {
	for (const p of r.content) if (p.type === 'tool_call' && back.has(p.name)) p.name = back.get(p.name)!
	return r
}

/** The decoder's tool-call blocks under the client's names. */
function renamingDecoder(d: FrameDecoder, back: Map<string, string>): FrameDecoder {
	const rename = (out: Parameters<FrameDecoder['push']>[1], from: number) => {
		for (let i = from; i < out.length; i++) {
			const e = out[i]!
			if (e.type === 'block_start' && e.block.kind === 'tool_call' && back.has(e.block.name)) out[i] = { ...e, block: { ...e.block, name: back.get(e.block.name)! } }
		}
	}
	return {
		push(frame, out) {
			const from = out.length
			d.push(frame, out)
			rename(out, from)
		},
		end(out) {
			const from = out.length
			d.end(out)
			rename(out, from)
		},
		get done() {
			return d.done
		},
	}
}

/**
 * The request and the upstream codec to use for `codec`'s vendor: as they are when it takes every tool name; else the
 * request under names it takes and a codec whose decoded answers (whole or streamed) carry the client's names again.
 */
export function withPortableToolNames(ir: ChatRequest, codec: UpstreamCodec): { ir: ChatRequest; codec: UpstreamCodec } {
	if (!ir.tools?.length && !ir.messages.some((m) => m.content.some((p) => p.type === 'tool_call'))) return { ir, codec }
	const to = portableNames(namesOf(ir), ruleOf(codec))
	if (!to) return { ir, codec }
	const back = new Map([...to].map(([client, portable]) => [portable, client]))
	return { ir: renameRequest(ir, to), codec: mapDecoding(codec, (r) => renameResponse(r, back), (d) => renamingDecoder(d, back)) }
}
