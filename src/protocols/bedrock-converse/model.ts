/**
 * The shapes of Amazon Bedrock's Converse API as the gateway sends and reads them
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html). Only upstreams speak it,
 * so these are types for building bodies and reading answers, not schemas for validating a client's request.
 * Unions are AWS's: an object with exactly one of its members set.
 * @module
 */

/** `ImageBlock.format`. */
export type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp'

/** `DocumentBlock.format`. */
export type ConverseDocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md'

export type ConverseImage = { format: ConverseImageFormat; source: { bytes: string } }

/** `DocumentBlock`; `context` tells the model how to read it. */
export type ConverseDocument = { format: ConverseDocumentFormat; name: string; source: { bytes: string }; context?: string }

/** `ReasoningContentBlock`: the model's reasoning text with the signature it may give, or its encrypted form. */
export type ConverseReasoning = { reasoningText: { text: string; signature?: string } } | { redactedContent: string }

export type ConverseToolResultContent = { text: string } | { json: unknown } | { image: ConverseImage } | { document: ConverseDocument }

/** `CachePointBlock`: the prompt up to here is cached. */
export type ConverseCachePoint = { cachePoint: { type: 'default' } }

/** `ContentBlock` (the members the gateway sends or reads). */
export type ConverseContentBlock =
	| ConverseCachePoint
	| { text: string }
	| { image: ConverseImage }
	| { document: ConverseDocument }
	| { toolUse: { toolUseId: string; name: string; input: unknown } }
	| { toolResult: { toolUseId: string; content: ConverseToolResultContent[]; status?: 'success' | 'error' } }
	| { reasoningContent: ConverseReasoning }

export type ConverseMessage = { role: 'user' | 'assistant'; content: ConverseContentBlock[] }

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } }

export type ConverseToolConfig = {
	tools: Array<{ toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }>
	toolChoice?: ConverseToolChoice
}

export type ConverseInferenceConfig = { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] }

/** The body of `POST /model/{modelId}/converse` and `/converse-stream` (the model id is in the path). */
export type ConverseRequest = {
	messages: ConverseMessage[]
	system?: Array<{ text: string } | ConverseCachePoint>
	inferenceConfig?: ConverseInferenceConfig
	toolConfig?: ConverseToolConfig
	/** Parameters of one model family that Converse has no field for (Nova 2's `reasoningConfig`, gpt-oss's `reasoning_effort`, `top_k`…: family.ts). */
	additionalModelRequestFields?: Record<string, unknown>
	/** The channel's guardrail (GuardrailConfiguration; GuardrailStreamConfiguration with `streamProcessingMode` for streams). */
	guardrailConfig?: ConverseGuardrailConfig
}

/** `GuardrailConfiguration` / `GuardrailStreamConfiguration`: the trace and stream mode in lower case, as Converse takes them. */
export type ConverseGuardrailConfig = { guardrailIdentifier: string; guardrailVersion: string; trace?: string; streamProcessingMode?: 'sync' | 'async' }

/** `TokenUsage`: `inputTokens` excludes the cache reads and writes, which come apart. */
export type ConverseUsage = { inputTokens?: number; outputTokens?: number; totalTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number }

/** `StopReason`. */
export type ConverseStopReason =
	| 'end_turn'
	| 'tool_use'
	| 'max_tokens'
	| 'stop_sequence'
	| 'guardrail_intervened'
	| 'content_filtered'
	| 'malformed_model_output'
	| 'malformed_tool_use'
	| 'model_context_window_exceeded'

/** The answer of `/converse`. */
export type ConverseResponse = {
	output?: { message?: { role?: string; content?: unknown[] } }
	stopReason?: string
	usage?: ConverseUsage
	metrics?: { latencyMs?: number }
	additionalModelResponseFields?: Record<string, unknown>
}
