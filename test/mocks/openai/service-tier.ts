/**
 * The `service_tier` an OpenAI answer reports: the tier that actually served it, which may differ from the one asked
 * (platform.openai.com/docs/api-reference/chat/object). `priority` (or its alias `fast`) is served at Priority unless
 * `#ramp` is in the request (Priority's ramp-rate limit downgrades it: "the response will show service_tier=default",
 * developers.openai.com/api/docs/guides/priority-processing); `flex` at Flex; `ultrafast` (the Responses API's) at
 * Ultrafast unless `#eu-region` is in the request ("Requests pinned to unsupported regions, such as the EU, run at the
 * standard (default) tier"); `default` at the standard tier; `auto` or none at the project's default tier, Priority
 * when `#project-priority` is in the request.
 * @module
 */

export function servedTier(asked: unknown, text: string): string {
	if (asked === 'priority' || asked === 'fast') return text.includes('#ramp') ? 'default' : 'priority'
	if (asked === 'ultrafast') return text.includes('#eu-region') ? 'default' : 'ultrafast'
	if (asked === 'flex' || asked === 'scale') return asked
	if (asked === 'default') return 'default'
	return text.includes('#project-priority') ? 'priority' : 'default'
}
