/**
 * OpenAI's `user` (chat completions; Responses alike) takes at most 64 characters: a longer one is 400 "Invalid 'user':
 * string too long. Expected a string with maximum length 64, but got a string with length N instead." Claude Code's
 * `metadata.user_id` is a ~150-character JSON object, so a longer id goes as its sha256 in hex (64 characters): still
 * one stable id per end user, which is what OpenAI asks it for (abuse monitoring).
 * @module
 */
import { sha256Hex } from '../../lib/secrets'

const OPENAI_USER_MAX = 64

/**
 * The `user` to send OpenAI for a canonical `user`.
 * @example openaiUser('user-42') // 'user-42'
 */
export const openaiUser = (user: string): string => (user.length <= OPENAI_USER_MAX ? user : sha256Hex(user))
