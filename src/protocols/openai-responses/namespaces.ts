/**
 * Namespace tools (`{type: "namespace", name, description, tools: [function…]}`): OpenAI's grouping of function tools
 * under a shared name, whose calls come back as `function_call` items with `namespace` beside `name`
 * (https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools). Codex CLI sends its
 * sub-agent tools so. Other vendors have no namespaces, so each grouped function goes upstream as a plain function
 * named `<namespace>__<name>`, and the vendor's calls of it are split back into `namespace` and `name` for the client.
 * @module
 */
import { isObject } from '../openai-chat/guards'

/** The flat name a namespaced function goes upstream under. */
export const joinNamespace = (namespace: string, name: string) => `${namespace}__${name}`

/**
 * Flat name → `{namespace, name}` for every function of the request's namespace tools (none: undefined).
 * @example namespacedNames([{ type: 'namespace', name: 'crm', tools: [{ type: 'function', name: 'find' }] }]) // Map { 'crm__find' => { namespace: 'crm', name: 'find' } }
 */
export function namespacedNames(tools: unknown): Map<string, { namespace: string; name: string }> | undefined {
	let out: Map<string, { namespace: string; name: string }> | undefined
	if (!Array.isArray(tools)) return out
	for (const t of tools) {
		if (!isObject(t) || t.type !== 'namespace' || typeof t.name !== 'string' || !Array.isArray(t.tools)) continue
		for (const f of t.tools) if (isObject(f) && f.type === 'function' && typeof f.name === 'string') (out ??= new Map()).set(joinNamespace(t.name, f.name), { namespace: t.name, name: f.name })
	}
	return out
}
