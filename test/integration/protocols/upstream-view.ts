/**
 * What a mock vendor received, read back in its own wire format into one neutral shape, so a test can assert that
 * the gateway put the model name, the system prompt and the turns where that vendor expects them.
 * @module
 */
import type { Upstream } from './harness'

export type Turn = { role: string; text: string }
export type UpstreamView = { model: string; system: string[]; turns: Turn[] }

type Obj = Record<string, any>

const texts = (content: unknown): string =>
	typeof content === 'string'
		? content
		: Array.isArray(content)
			? content
					.filter((p: Obj) => p?.type === 'text' || (typeof p?.text === 'string' && p?.thought !== true && p?.type === undefined))
					.map((p: Obj) => p.text)
					.join(' ')
			: ''

/** Reads a recorded request of `up` (the body as the mock parsed it, and its path). */
export function upstreamView(up: Upstream, req: { path: string; body: unknown }): UpstreamView {
	const b = req.body as Obj
	if (up === 'openai') {
		const msgs = b.messages as Obj[]
		const sys = msgs.filter((m) => m.role === 'system' || m.role === 'developer')
		return { model: b.model, system: sys.map((m) => texts(m.content)), turns: msgs.filter((m) => !sys.includes(m)).map((m) => ({ role: m.role, text: texts(m.content) })) }
	}
	if (up === 'anthropic') {
		const system = b.system === undefined ? [] : typeof b.system === 'string' ? [b.system] : (b.system as Obj[]).map((s) => s.text)
		return { model: b.model, system, turns: (b.messages as Obj[]).map((m) => ({ role: m.role, text: texts(m.content) })) }
	}
	const model = decodeURIComponent(/\/models\/([^:]+):/.exec(req.path)?.[1] ?? '')
	const sys = b.systemInstruction ?? b.system_instruction
	return {
		model,
		system: sys ? [texts(sys.parts)] : [],
		turns: (b.contents as Obj[]).map((c) => ({ role: c.role === 'model' ? 'assistant' : (c.role ?? 'user'), text: texts(c.parts) })),
	}
}
