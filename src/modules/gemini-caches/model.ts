/** TypeBox schemas of Gemini's `cachedContents` routes (ai.google.dev/api/caching), as the gateway serves them. */
import { t } from 'elysia'
import { GeminiContent, GeminiPart, GeminiTool, GeminiToolConfig } from '../../protocols/gemini/model'
import { GoogleKeyQuery } from '../models/model'

const open = { additionalProperties: true }

const expiry = {
	ttl: t.Optional(t.String({ description: 'How long the cache lives from now, a protobuf Duration: seconds with up to nine decimals and an `s` (`"300s"`, `"3.5s"`). Without it nor `expireTime`, 1 hour' })),
	expireTime: t.Optional(t.String({ description: 'When the cache expires, RFC 3339 (`"2026-01-01T00:00:00Z"`)' })),
}

/** `POST /v1beta/cachedContents`: a CachedContent to create. */
export const CachedContentCreate = t.Object(
	{
		model: t.String({ description: '`models/{model}`: any model the key may use; requests naming the cache must call that model' }),
		displayName: t.Optional(t.String({ maxLength: 128 })),
		contents: t.Optional(t.Array(GeminiContent)),
		systemInstruction: t.Optional(t.Object({ role: t.Optional(t.String()), parts: t.Array(GeminiPart) }, open)),
		tools: t.Optional(t.Array(GeminiTool)),
		toolConfig: t.Optional(GeminiToolConfig),
		...expiry,
	},
	open,
)

/** `PATCH /v1beta/cachedContents/{id}`: only the expiry changes. */
export const CachedContentUpdate = t.Object(expiry, open)

/** The CachedContent resource as the gateway answers it: the metadata, never the contents (input only at Google too). */
export const CachedContent = t.Object(
	{
		name: t.String({ description: '`cachedContents/{id}`: put it in a request\'s `cachedContent`' }),
		model: t.String({ description: '`models/{model}`' }),
		displayName: t.Optional(t.String()),
		usageMetadata: t.Object({ totalTokenCount: t.Integer({ description: 'Tokens the cached content counts for its model' }) }),
		createTime: t.String(),
		updateTime: t.String(),
		expireTime: t.String(),
	},
	open,
)

export const CachedContentList = t.Object({ cachedContents: t.Array(CachedContent), nextPageToken: t.Optional(t.String()) })

export const CachedContentListQuery = t.Object({ pageSize: t.Optional(t.Numeric({ minimum: 1 })), pageToken: t.Optional(t.String()), key: GoogleKeyQuery })
