/**
 * Storage schema (Drizzle). Money columns are integer micro-USD (`bigint`, read as JS numbers: exact up to
 * 2^53 micro-USD ≈ $9 billion). Prices are integer micro-USD per million tokens (i.e. pico-USD per token), so a
 * price such as $0.075/Mtok stays an integer. `drizzle/` holds the SQL generated from this file.
 * @module
 */
import { sql } from 'drizzle-orm'
import { bigint, bigserial, boolean, customType, index, integer, jsonb, pgTable, primaryKey, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

const money = (name: string) => bigint(name, { mode: 'number' })
const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow()

export const accounts = pgTable('accounts', {
	id: serial('id').primaryKey(),
	name: text('name').notNull(),
	/** Available balance: credits minus settled costs minus open holds. Never below zero. */
	balance: money('balance').notNull().default(0),
	status: text('status').notNull().default('active'),
	createdAt: createdAt(),
})

/** Append-only record of money added to accounts; with usage costs and holds it proves the balance. */
export const credits = pgTable(
	'credits',
	{
		id: serial('id').primaryKey(),
		accountId: integer('account_id').notNull().references(() => accounts.id),
		amount: money('amount').notNull(),
		note: text('note'),
		createdAt: createdAt(),
	},
	(t) => [index('credits_account_idx').on(t.accountId)],
)

export const apiTokens = pgTable(
	'api_tokens',
	{
		id: serial('id').primaryKey(),
		accountId: integer('account_id').notNull().references(() => accounts.id),
		name: text('name').notNull(),
		/** sha256 of the full key, hex: the lookup index. */
		keyHash: text('key_hash').notNull(),
		/** AES-GCM ciphertext of the full key under SECRET_KEY, so it can be revealed again. */
		keyEnc: text('key_enc').notNull(),
		/** First and last characters, for masked display without decrypting. */
		keyHint: text('key_hint').notNull(),
		expiresAt: timestamp('expires_at', { withTimezone: true }),
		spendLimit: money('spend_limit'),
		/** Settled spend. Open reservations are in `reserved`. */
		spent: money('spent').notNull().default(0),
		reserved: money('reserved').notNull().default(0),
		status: text('status').notNull().default('active'),
		/** Optional limits (routing issue): requests and tokens per minute, allowed model names. */
		rpmLimit: integer('rpm_limit'),
		tpmLimit: integer('tpm_limit'),
		allowedModels: jsonb('allowed_models').$type<string[]>(),
		createdAt: createdAt(),
		lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
	},
	(t) => [uniqueIndex('api_tokens_key_hash_idx').on(t.keyHash), index('api_tokens_account_idx').on(t.accountId)],
)

export const channels = pgTable('channels', {
	id: serial('id').primaryKey(),
	name: text('name').notNull().unique(),
	type: text('type').notNull(),
	baseUrl: text('base_url').notNull(),
	/** Encrypted upstream key (AES-GCM under SECRET_KEY); never returned by the API. */
	apiKeyEnc: text('api_key_enc').notNull(),
	models: jsonb('models').$type<string[]>().notNull(),
	modelMap: jsonb('model_map').$type<Record<string, string>>().notNull().default(sql`'{}'::jsonb`),
	priority: integer('priority').notNull().default(0),
	weight: integer('weight').notNull().default(1),
	status: text('status').notNull().default('enabled'),
	disabledReason: text('disabled_reason'),
	/** 'config' when declared in GATEWAY_CONFIG (re-applied at start), 'api' when created through /api. */
	source: text('source').notNull().default('api'),
	/** Per-channel options such as timeouts and extra headers. */
	settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
	createdAt: createdAt(),
	updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

export const models = pgTable('models', {
	id: serial('id').primaryKey(),
	name: text('name').notNull().unique(),
	/** micro-USD per million tokens. */
	inputPerMtok: money('input_per_mtok').notNull().default(0),
	outputPerMtok: money('output_per_mtok').notNull().default(0),
	cacheReadPerMtok: money('cache_read_per_mtok'),
	cacheWritePerMtok: money('cache_write_per_mtok'),
	/** micro-USD per request (images, tasks, or a flat fee). */
	perRequest: money('per_request'),
	maxOutputTokens: integer('max_output_tokens'),
	/** Tokens of input the model reads (shown in model lists); null: the built-in figure, if any (routing/model-limits.ts). */
	contextWindow: integer('context_window'),
	/** Other unit prices in micro-USD (per_image by size/quality, per_minute, per_second, per_char, per action). */
	prices: jsonb('prices').$type<Record<string, number>>().notNull().default(sql`'{}'::jsonb`),
	status: text('status').notNull().default('enabled'),
	source: text('source').notNull().default('api'),
	createdAt: createdAt(),
	updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

/**
 * Leases: money an instance took out of an account's balance (and out of a key's headroom, into its `reserved`)
 * with one atomic update, to serve reservations from memory (src/billing/ledger.ts). `amount` is what the lease
 * still holds; settled costs leave it at each flush. A row lives from the first reservation until the lease is
 * returned (idle, shutdown, reclaim) or, when its instance died, until the sweeper releases it after `expires_at`
 * (every flush moves that forward). Ids are never reused, so a flush that finds its row gone knows it was swept.
 */
export const ledgerLeases = pgTable(
	'ledger_leases',
	{
		id: text('id').primaryKey(),
		accountId: integer('account_id').notNull(),
		tokenId: integer('token_id'),
		amount: money('amount').notNull(),
		/** The part reserved by requests in flight, as of the instance's last flush (what views call reserved). */
		inUse: money('in_use').notNull().default(0),
		createdAt: createdAt(),
		expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
	},
	(t) => [index('ledger_leases_expires_idx').on(t.expiresAt), index('ledger_leases_account_idx').on(t.accountId), index('ledger_leases_token_idx').on(t.tokenId)],
)

/**
 * The last flush each ledger instance applied (sb_lease_flush). A flush whose reply was lost (connection cut after
 * the commit) is sent again with the same number; finding it here, the database applies nothing twice and answers
 * what it answered the first time. One row per instance: a later batch replaces the one before, which the instance
 * saw confirmed before building it. Rows of instances gone for a week are swept.
 */
export const ledgerFlushes = pgTable('ledger_flushes', {
	instance: text('instance').primaryKey(),
	seq: bigint('seq', { mode: 'number' }).notNull(),
	/** Ids of the leases that batch found swept: the answer to give again. */
	lost: text('lost').array().notNull().default(sql`'{}'`),
	updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

export const usageLogs = pgTable(
	'usage_logs',
	{
		id: bigserial('id', { mode: 'number' }).primaryKey(),
		createdAt: createdAt(),
		requestId: text('request_id').notNull(),
		accountId: integer('account_id').notNull(),
		tokenId: integer('token_id'),
		model: text('model').notNull(),
		upstreamModel: text('upstream_model'),
		endpoint: text('endpoint').notNull(),
		channelId: integer('channel_id'),
		channel: text('channel'),
		inputTokens: integer('input_tokens').notNull().default(0),
		outputTokens: integer('output_tokens').notNull().default(0),
		cachedTokens: integer('cached_tokens').notNull().default(0),
		cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
		reasoningTokens: integer('reasoning_tokens').notNull().default(0),
		/** Charged, micro-USD. */
		cost: money('cost').notNull().default(0),
		status: integer('status').notNull(),
		latencyMs: integer('latency_ms').notNull().default(0),
		estimated: boolean('estimated').notNull().default(false),
		/** How the request ended: ok, error, client_abort, upstream_cut … */
		endReason: text('end_reason').notNull().default('ok'),
		stream: boolean('stream').notNull().default(false),
	},
	// No index on request_id: nothing the gateway asks looks a row up by it, and maintaining one cost ~6 µs of the
	// database's CPU per row, ~30% of what writing a usage row costs it (a text key, however ordered; bench/README).
	(t) => [index('usage_logs_account_idx').on(t.accountId, t.id), index('usage_logs_token_idx').on(t.tokenId, t.id)],
)

/** Console users. Each belongs to one account; administrators see everything. Passwords via Bun.password. */
export const users = pgTable(
	'users',
	{
		id: serial('id').primaryKey(),
		accountId: integer('account_id').notNull().references(() => accounts.id),
		username: text('username').notNull(),
		passwordHash: text('password_hash').notNull(),
		isAdmin: boolean('is_admin').notNull().default(false),
		status: text('status').notNull().default('active'),
		createdAt: createdAt(),
	},
	(t) => [uniqueIndex('users_username_idx').on(t.username)],
)

/** Console sessions: the cookie carries a random id; only its sha256 is stored. */
export const sessions = pgTable(
	'sessions',
	{
		idHash: text('id_hash').primaryKey(),
		userId: integer('user_id').notNull().references(() => users.id),
		csrfToken: text('csrf_token').notNull(),
		createdAt: createdAt(),
		expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
	},
	(t) => [index('sessions_user_idx').on(t.userId)],
)

/** Settings an administrator changes at run time (e.g. self sign-up), key → JSON value. */
export const settings = pgTable('settings', {
	key: text('key').primaryKey(),
	value: jsonb('value').notNull(),
	updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

/**
 * Asynchronous upstream tasks (video, Midjourney, Suno). Status moves only by compare-and-set
 * (`UPDATE … WHERE status = $expected`), so overlapping pollers and several instances refund a failure once.
 */
export const tasks = pgTable(
	'tasks',
	{
		id: text('id').primaryKey(),
		kind: text('kind').notNull(),
		accountId: integer('account_id').notNull(),
		tokenId: integer('token_id'),
		model: text('model').notNull(),
		channelId: integer('channel_id'),
		upstreamId: text('upstream_id'),
		/** queued | in_progress | completed | failed */
		status: text('status').notNull().default('queued'),
		progress: integer('progress').notNull().default(0),
		/** The ledger request id whose charge a failure refunds. */
		requestId: text('request_id').notNull(),
		cost: money('cost').notNull().default(0),
		refunded: boolean('refunded').notNull().default(false),
		result: jsonb('result').$type<Record<string, unknown>>(),
		error: text('error'),
		createdAt: createdAt(),
		updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
	},
	(t) => [index('tasks_account_idx').on(t.accountId), index('tasks_status_idx').on(t.status), uniqueIndex('tasks_upstream_idx').on(t.kind, t.channelId, t.upstreamId)],
)

/**
 * PostgreSQL `bytea`, which drizzle's pg-core has no column for. postgres.js reads it as a Buffer, PGlite as a
 * Uint8Array: both are Uint8Arrays, and both drivers send one as `bytea`.
 */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' })

/**
 * The bytes of a Gemini batch input file (a JSONL upload, modules/gemini-files/upload.ts) as its chunks passed to the
 * vendor, by offset, as `bytea`: Google serves no uploaded file back, and a batch naming the file is bounded from them.
 * Gone with the file's record.
 */
export const geminiFileParts = pgTable(
	'gemini_file_parts',
	{
		fileId: text('file_id')
			.notNull()
			.references(() => tasks.id, { onDelete: 'cascade' }),
		offset: bigint('offset', { mode: 'number' }).notNull(),
		data: bytea('data').notNull(),
	},
	(t) => [primaryKey({ columns: [t.fileId, t.offset] })],
)

/**
 * Responses the vendor stores (OpenAI's Responses API, `store` not false), by the id the account received: a
 * `previous_response_id` is continued only for the account it was answered to, on the channel (vendor key) that holds
 * it. Every account shares a channel's key, so the vendor alone cannot tell them apart.
 */
export const storedResponses = pgTable(
	'stored_responses',
	{
		responseId: text('response_id').primaryKey(),
		accountId: integer('account_id').notNull(),
		channelId: integer('channel_id'),
		/** The conversation (modules/conversations) the response was a turn of, shown on retrieval: OpenAI never saw it. */
		conversationId: text('conversation_id'),
		createdAt: createdAt(),
	},
	// The purge (every 6 hours) deletes by age: without it each purge reads the whole table.
	(t) => [index('stored_responses_created_idx').on(t.createdAt)],
)

/**
 * Items of the responses the vendor stores, by id (a stored response's output items, and the input items an account
 * listed through `input_items`): an `item_reference` naming one is sent only for the account it was answered to, on
 * the channel holding it, as stored_responses is for `previous_response_id`. OpenAI resolves a reference within the
 * project of the key, which every account shares.
 */
export const storedItems = pgTable(
	'stored_items',
	{
		itemId: text('item_id').primaryKey(),
		accountId: integer('account_id').notNull(),
		channelId: integer('channel_id'),
		createdAt: createdAt(),
	},
	(t) => [index('stored_items_created_idx').on(t.createdAt)],
)

/**
 * Anthropic message threads (beta `message-threads-2026-08-12`) relayed to Claude, by the id of each reply (what a
 * `thread: {type: 'continue', previous_message_id}` names): the account it was answered to, the channel (vendor key)
 * that keeps the thread, and the thread's size in tokens as the vendor reported it (the turn's whole input plus its
 * output). A continue sends only the new messages while the vendor bills the whole thread as its input, so it is
 * reserved for this size plus the new messages (src/modules/messages/threads.ts).
 */
export const messageThreads = pgTable(
	'message_threads',
	{
		messageId: text('message_id').primaryKey(),
		accountId: integer('account_id').notNull(),
		channelId: integer('channel_id'),
		tokens: integer('tokens').notNull(),
		createdAt: createdAt(),
	},
	// The purge deletes by age (a thread lives 5 minutes after its last request at the vendor).
	(t) => [index('message_threads_created_idx').on(t.createdAt)],
)

/**
 * Claude's thinking blocks (text and signature, or redacted data) of converted chat-completions answers that called
 * tools, kept by the account and the answer's first tool-call id (src/modules/chat/kept-thinking.ts): chat clients
 * that drop `reasoning_details` when they replay the call get them back, so thinking stays on. Kept a day.
 */
export const keptThinking = pgTable(
	'kept_thinking',
	{
		accountId: integer('account_id').notNull(),
		callId: text('call_id').notNull(),
		blocks: jsonb('blocks').notNull(),
		createdAt: createdAt(),
	},
	(t) => [primaryKey({ columns: [t.accountId, t.callId] }), index('kept_thinking_created_idx').on(t.createdAt)],
)

/**
 * Output items of Responses answers converted from another vendor (Claude, Gemini), kept so that a later request on
 * any instance can name them by `item_reference`, as OpenAI keeps a stored response's items
 * (src/modules/responses/converted-items.ts). Kept as long as stored response ids are. The row of a whole Response
 * object also holds its own input (`input`: the items its request sent) and the response it continued
 * (`previous_id`, by `previous_response_id`): its whole input, which a continuation of it starts from and `input_items`
 * lists, is that chain's inputs and outputs (previous.ts). A row written before `previous_id` was (null) holds its
 * whole input itself, the previous turns expanded. `deleted`: deleted by the client but still continued by another.
 */
export const convertedItems = pgTable(
	'converted_items',
	{
		itemId: text('item_id').primaryKey(),
		accountId: integer('account_id').notNull(),
		item: jsonb('item').notNull(),
		input: jsonb('input'),
		previousId: text('previous_id'),
		deleted: boolean('deleted').notNull().default(false),
		createdAt: createdAt(),
	},
	(t) => [
		index('converted_items_created_idx').on(t.createdAt),
		// Whether a response is still continued (a deletion hides it then, a purge keeps it).
		index('converted_items_previous_idx')
			.on(t.previousId)
			.where(sql`${t.previousId} IS NOT NULL`),
	],
)

/**
 * Chat completions stored by `store: true` on /v1/chat/completions, for every model (src/modules/chat-stored): the
 * completion as the caller got it (a stream's assembled into the object a whole answer would have been), the request's
 * messages, its `metadata` (changed by the update route), under the owning account and the completion's own id. `seq`
 * orders the list (creation order) and is its cursor; kept 30 days, as OpenAI keeps stored completions.
 */
export const storedCompletions = pgTable(
	'stored_completions',
	{
		seq: bigserial('seq', { mode: 'number' }).primaryKey(),
		accountId: integer('account_id').notNull(),
		completionId: text('completion_id').notNull(),
		model: text('model').notNull(),
		completion: jsonb('completion').notNull(),
		messages: jsonb('messages').notNull(),
		metadata: jsonb('metadata'),
		createdAt: createdAt(),
	},
	(t) => [
		uniqueIndex('stored_completions_id_idx').on(t.accountId, t.completionId),
		// The list: an account's completions in `seq` order, from a cursor.
		index('stored_completions_list_idx').on(t.accountId, t.seq),
		index('stored_completions_created_idx').on(t.createdAt),
		// The list's `metadata[key]=value` filter (`metadata @> …`): the matching rows are found here, and the account's
		// among them, rather than by reading every completion of the account (jsonb_path_ops: containment only, smaller).
		index('stored_completions_metadata_idx').using('gin', t.metadata.op('jsonb_path_ops')),
	],
)

/**
 * Interactions of Gemini's Interactions API answered through the gateway (src/modules/interactions), kept unless the
 * request said `store: false`, for `GET /v1beta/interactions/{id}` and `previous_interaction_id`: the Interaction
 * resource shown (its output steps), the input its own request sent (steps), and the interaction it continued. Only
 * the account it was answered to sees it. Kept until deleted.
 */
export const interactions = pgTable(
	'interactions',
	{
		id: text('id').primaryKey(),
		accountId: integer('account_id').notNull(),
		interaction: jsonb('interaction').notNull(),
		input: jsonb('input').notNull(),
		previousId: text('previous_id'),
		/** A background interaction's stream events (their data), kept once it ended: `GET ?stream=true` replays them. */
		events: jsonb('events'),
		/** Last written: a running background interaction's instance touches it while it runs (a stale one died with it). */
		updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
		createdAt: createdAt(),
	},
	(t) => [index('interactions_account_idx').on(t.accountId)],
)

/**
 * Conversations of OpenAI's Conversations API, kept by this gateway for every model (src/modules/conversations): the
 * account that created one is the only one that sees it. Kept until deleted, as OpenAI keeps conversations (no 30-day
 * limit, unlike stored responses).
 */
export const conversations = pgTable('conversations', {
	id: text('id').primaryKey(),
	accountId: integer('account_id').notNull(),
	metadata: jsonb('metadata').notNull().default({}),
	/**
	 * A turn under way holds the conversation (modules/conversations/lock.ts): its token, and when the hold lapses
	 * should the instance holding it never let go.
	 */
	busyBy: text('busy_by'),
	busyUntil: timestamp('busy_until', { withTimezone: true }),
	createdAt: createdAt(),
})

/**
 * A conversation's items, in the order they were added (`seq`). `item` is the item as it goes upstream: with the id
 * the client or the upstream gave it, without one the gateway assigned (`item_id` holds the id shown either way).
 */
export const conversationItems = pgTable(
	'conversation_items',
	{
		seq: bigserial('seq', { mode: 'number' }).primaryKey(),
		conversationId: text('conversation_id')
			.notNull()
			.references(() => conversations.id, { onDelete: 'cascade' }),
		itemId: text('item_id').notNull(),
		item: jsonb('item').notNull(),
		createdAt: createdAt(),
	},
	(t) => [uniqueIndex('conversation_items_item_idx').on(t.conversationId, t.itemId), index('conversation_items_seq_idx').on(t.conversationId, t.seq)],
)

/**
 * Gemini context caches (`/v1beta/cachedContents`, src/modules/gemini-caches), kept by the gateway for every model: the
 * cached `contents`, `systemInstruction`, `tools` and `toolConfig` as the client sent them (Gemini's wire form, which a
 * request naming the cache gets in front of its own before it is decoded, so Gemini channels take it verbatim), their
 * token count for the model, and the expiry. Only the account that made one sees it; expired ones are purged.
 */
export const geminiCaches = pgTable(
	'gemini_caches',
	{
		id: text('id').primaryKey(),
		accountId: integer('account_id').notNull(),
		/** The model as the client named it, without `models/`. */
		model: text('model').notNull(),
		displayName: text('display_name'),
		content: jsonb('content').notNull(),
		tokens: integer('tokens').notNull(),
		expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
		updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
		createdAt: createdAt(),
	},
	(t) => [index('gemini_caches_account_idx').on(t.accountId, t.createdAt), index('gemini_caches_expires_idx').on(t.expiresAt)],
)

/**
 * Rate-limit buckets of keys that have `rpm_limit` or `tpm_limit`, on PostgreSQL without Redis (src/limits/pg-buckets.ts):
 * one row per key and minute, counted by every instance on the database. UNLOGGED (drizzle/0023): a crash empties it,
 * which only forgets the last minute or two of counts, and its writes skip the WAL. Old minutes are swept.
 */
export const rateBuckets = pgTable(
	'rate_buckets',
	{
		/** The key's `keyId` (a prefix of its hash, never the key). */
		keyId: text('key_id').notNull(),
		/** Minutes since the epoch: the bucket's one-minute window. */
		minute: integer('minute').notNull(),
		requests: integer('requests').notNull().default(0),
		tokens: bigint('tokens', { mode: 'number' }).notNull().default(0),
	},
	(t) => [primaryKey({ columns: [t.keyId, t.minute] })],
)

/**
 * Failed sign-ins and wrong `ADMIN_KEY` bearers, counted by every instance on the database when there is no Redis
 * (src/limits/strikes.ts): one row per counted key (the limit's name, then a username and address, or an address),
 * its count, and when it lapses. Written only by failures; lapsed rows are swept.
 */
export const loginStrikes = pgTable(
	'login_strikes',
	{
		key: text('key').primaryKey(),
		count: integer('count').notNull(),
		expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
	},
	(t) => [index('login_strikes_expires_idx').on(t.expiresAt)],
)
