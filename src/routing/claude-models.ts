/**
 * What Claude's models take, by name: how thinking is asked for and whether sampling settings are accepted. A name is
 * read as Anthropic, Bedrock (`anthropic.claude-…`) and Vertex (`claude-…@date`) spell it; a dated snapshot is its
 * alias's model.
 *
 * Sources (platform.claude.com/docs/en/about-claude/models/overview and each model's page, models/<id>/overview):
 * - Claude Opus 4.6 and Sonnet 4.6 take adaptive thinking (`thinking: {type: 'adaptive'}` with `output_config.effort`);
 *   a budget (`type: 'enabled'`, `budget_tokens`) is deprecated there but works (whats-new-claude-4-6).
 * - From Claude Opus 4.7 on (Opus 4.8, Sonnet 5, Opus 5, Fable 5, the 5.5 models) thinking is adaptive only: a budget is
 *   a 400 ("\"thinking.type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and
 *   \"output_config.effort\" to control thinking behavior."), and so is a non-default `temperature`, `top_p` or
 *   `top_k` ("`temperature` is deprecated for this model.") (migration-guide#migrating-to-claude-opus-4-7,
 *   models/sonnet-5/overview).
 * - Claude Fable 5 / 5.1, Mythos and Opus 5.5 think always ("Adaptive (always on)"): thinking cannot be turned off
 *   (models/opus-5-5/overview, models/fable-5-1/overview).
 * - Claude Haiku 4.5 and earlier take a budget only ("Extended").
 * @module
 */

/** The family and version of a Claude model name; `mythos-preview` and other unnumbered names have no version. */
const NAME = /claude-(opus|sonnet|haiku|fable|mythos)(?:-(\d+)(?:-(\d)(?!\d))?)?/

/** How a model's thinking is asked for: a token budget, adaptive only, or adaptive and never off. */
export type ClaudeThinking = 'budget' | 'adaptive' | 'always'

/** The family and version (4.7 → 47, 5 → 50) of a Claude name, when it is one of the named families. */
function claudeVersion(model: string): { family: string; version?: number } | undefined {
	const m = NAME.exec(model)
	if (!m) return undefined
	return { family: m[1], version: m[2] === undefined ? undefined : Number(m[2]) * 10 + Number(m[3] ?? 0) }
}

/**
 * How the model takes thinking: `budget` (Claude 4.6 and earlier, and names this table does not know), `adaptive`
 * (Claude Opus 4.7 and later), `always` (adaptive, and it cannot be turned off).
 * @example claudeThinking('claude-sonnet-4-5-20250929') === 'budget'
 * @example claudeThinking('claude-opus-4-7') === 'adaptive'
 * @example claudeThinking('claude-fable-5-1') === 'always'
 */
export function claudeThinking(model: string): ClaudeThinking {
	const v = claudeVersion(model)
	if (!v) return 'budget'
	if (v.family === 'fable' || v.family === 'mythos' || (v.family === 'opus' && v.version === 55)) return 'always'
	return v.version !== undefined && v.version >= 47 ? 'adaptive' : 'budget'
}

/**
 * Whether the model refuses sampling settings (`temperature`, `top_p`, `top_k`): Claude Opus 4.7 and later.
 * @example claudeFixedSampling('claude-opus-4-7') === true
 * @example claudeFixedSampling('claude-sonnet-4-6') === false
 */
export const claudeFixedSampling = (model: string): boolean => claudeThinking(model) !== 'budget'
