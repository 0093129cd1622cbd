/** Shapes of the management API as the console reads them (see the OpenAPI document at /docs). */
import type { PriceFields } from './lib/prices'

export type User = { id: number; username: string; account_id: number; account_name: string; is_admin: boolean; status: string; created_at: string }

export type Account = { id: number; name: string; balance: number; status: string; created_at?: string }

export type SessionInfo = { user: User | null; account: Account | null; csrf_token: string | null; signup_enabled: boolean }

export type Token = {
	id: number
	account_id: number
	name: string
	key_hint: string
	expires_at: string | null
	spend_limit: number | null
	spent: number
	reserved: number
	status: string
	/** Requests and tokens per minute; null = no limit. */
	rpm_limit: number | null
	tpm_limit: number | null
	/** Names (`*` patterns) the key may call; null = every model. */
	allowed_models: string[] | null
	created_at: string
	last_used_at: string | null
}

export type UsageRow = {
	id: number
	created_at: string
	request_id: string
	account_id: number
	token_id: number | null
	model: string
	endpoint: string
	channel: string | null
	input_tokens: number
	output_tokens: number
	/** Of the input tokens: read from the vendor's cache, and written to it (each billed at its own price). */
	cached_tokens: number
	cache_write_tokens: number
	reasoning_tokens: number
	cost: number
	status: number
	latency_ms: number
	/** Token counts the gateway estimated (the upstream reported none). */
	estimated: boolean
	end_reason: string
	stream: boolean
}

export type Page<T> = { data: T[]; next_cursor: string | null }
/** `GET /api/tokens`: a page of keys and how many match in all. */
export type TokenPage = Page<Token> & { total: number }

export type SpendDay = { day: string; cost: number; requests: number; input_tokens: number; output_tokens: number }

export type PricedModel = PriceFields & { name: string; endpoints: string[]; protocols: string[] }

export type ModelPrice = {
	id: number
	name: string
	input_per_mtok: number
	output_per_mtok: number
	cache_read_per_mtok: number | null
	cache_write_per_mtok: number | null
	per_request: number | null
	max_output_tokens: number | null
	context_window: number | null
	prices: Record<string, number>
	status: string
	source: string
}

/** This instance's circuit-breaker state for a channel (cooldown after failures). */
export type ChannelHealth = {
	state: string
	consecutive_failures?: number
	open_until?: string | null
	last_error?: string | null
	last_failure_at?: string | null
}

export type Channel = {
	id: number
	name: string
	type: string
	base_url: string
	models: string[]
	model_map: Record<string, string>
	priority: number
	weight: number
	status: string
	disabled_reason: string | null
	source: string
	/** timeouts, headers, responses_api, structured_outputs (README, Configuration). */
	settings?: Record<string, unknown>
	health?: ChannelHealth | null
}

export type ChannelTest = { ok: boolean; testable?: boolean; status: number; latency_ms: number; model: string; message: string }

export type Settings = { signup_enabled: boolean; signup_balance: number }

export const CHANNEL_TYPES = ['openai', 'anthropic', 'gemini', 'azure', 'bedrock', 'vertex', 'rerank', 'video', 'imgsvc', 'musicsvc'] as const
