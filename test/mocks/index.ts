/**
 * Mock OpenAI, Anthropic and Gemini API servers for tests and benchmarks.
 * Each starts on a free port, answers deterministically from the request (see `shared/scenario.ts`),
 * validates like its vendor and can inject faults (`fault`, `faultOnce`).
 * @example
 * const m = await startOpenAIMock({ apiKey: 'up-key' })
 * m.faultOnce = { kind: 'status', status: 500 }
 * await m.stop()
 * @module
 */

export { startAnthropicMock, ANTHROPIC_MODELS } from './anthropic'
export { thinkingSignature } from './anthropic/read'
export { startGeminiMock, GEMINI_MODELS } from './gemini'
export { textSignatureFor, thoughtSignatureFor } from './gemini/validate'
export { SEARCH_TOOL_TOKENS } from './gemini/interactions'
export { TOOL_USE_TOKENS } from './shared/scenario'
export { startOpenAIMock, OPENAI_MODELS } from './openai'
export { baseText, inputTokens, plan, PREFACE_TEXT, REFUSAL_TEXT, type Conversation, type Plan } from './shared/scenario'
export { countWords, toolWords, vector } from './shared/text'
export type { Fault, MockOptions, RecordedAbort, RecordedRequest, VendorMock } from './shared/types'
export { converseSignature, startBedrockMock, type BedrockFault, type BedrockMock } from './bedrock'
export { BLOCKED_MESSAGE, type MockGuardrail } from './bedrock/guardrail'
export { startVertexMock, type VertexFault, type VertexMock } from './vertex'
