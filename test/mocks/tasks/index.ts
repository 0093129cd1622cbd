/**
 * Mock task vendors: OpenAI's video API, midjourney-proxy and the Suno task API. Each task advances one step per
 * read of its state (`steps`, default 2); `#fail` in a prompt makes it fail. See each file for the wire shapes.
 * @example
 * const v = await startVideoMock({ apiKey: 'up-video' })     // v.url = http://127.0.0.1:PORT/v1
 * const mj = await startMidjourneyMock({ apiKey: 'up-mj' })   // mj.url = http://127.0.0.1:PORT
 * const s = await startSunoMock({ apiKey: 'up-suno', steps: 3 })
 * @module
 */

export { startMidjourneyMock, type MidjourneyMock } from './midjourney'
export { startSunoMock, type SunoMock } from './suno'
export { SPRITESHEET_BYTES, startVideoMock, THUMBNAIL_BYTES, VIDEO_BYTES, type VideoMock } from './video'
export type { MockTask, TaskMockOptions } from './progress'
