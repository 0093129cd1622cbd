/** Response schemas shared by the passthrough endpoints: every error is in OpenAI's shape. */
import { OpenAIErrorBody } from '../protocols/openai-chat'

/** The error statuses a billed passthrough call can answer. */
export const openaiErrors = {
	400: OpenAIErrorBody,
	401: OpenAIErrorBody,
	402: OpenAIErrorBody,
	403: OpenAIErrorBody,
	404: OpenAIErrorBody,
	429: OpenAIErrorBody,
	502: OpenAIErrorBody,
}
