import { describe, expect, it } from 'bun:test'
import { estimateSeconds, MIN_BYTES_PER_SECOND, SETTLE_BYTES_PER_SECOND } from '../../../src/modules/audio/duration'
import { adtsDuration, flacDuration, mediaDuration, mp3Duration, mp4Duration, oggDuration, wavDuration, webmDuration } from '../../../src/modules/audio/media-duration'
import { adts, flac, m4a, mp3Cbr, mp3Vbr, oggOpus, wavFile, webm } from './audio-files'

const blob = (b: Uint8Array<ArrayBuffer>) => new Blob([b])

describe('audio duration readers', () => {
	it('should read a WAV from its fmt and data chunks, past other chunks', async () => {
		expect((await wavDuration(blob(wavFile(3))))!.seconds).toBe(3)
		expect((await wavDuration(blob(wavFile(2.5, 8000, 300))))!.seconds).toBe(2.5)
		expect(await wavDuration(blob(mp3Cbr(1.2)))).toBeUndefined()
	})

	it('should walk the frames of a CBR MP3: 60 s at 128 kbit/s is 960,000 bytes', async () => {
		const file = mp3Cbr(60)
		expect(file.length).toBe(960_000)
		expect(await mp3Duration(blob(file))).toMatchObject({ seconds: 60, format: 'mp3' })
	})

	it('should count a VBR MP3 by its frames, skipping the ID3v2 tag, the Xing frame and the ID3v1 tag', async () => {
		expect((await mp3Duration(blob(mp3Vbr(12, 50_000))))!.seconds).toBeCloseTo(12, 6)
		// A Xing count that lies (1 frame) changes nothing: the frames are what a decoder plays.
		expect((await mp3Duration(blob(mp3Vbr(12, 0, 1))))!.seconds).toBeCloseTo(12, 6)
	})

	it('should read M4A mvhd with moov at the end, FLAC STREAMINFO past cover art, and Ogg Opus less its pre-skip', async () => {
		expect((await mp4Duration(blob(m4a(61_500, 5000))))!.seconds).toBe(61.5)
		expect(await flacDuration(blob(flac(10, 300_000, 150_000)))).toMatchObject({ seconds: 10, audioBytes: 150_000 })
		expect((await oggDuration(blob(oggOpus(7, 40_000))))!.seconds).toBe(7)
	})

	it('should walk the frames of an ADTS AAC: 1,024 samples each at 44.1 kHz, not the MP3 reader', async () => {
		const file = adts(30)
		const d = await adtsDuration(blob(file))
		expect(d).toMatchObject({ format: 'aac' })
		expect(d!.seconds).toBeCloseTo((Math.round((30 * 44100) / 1024) * 1024) / 44100, 6)
		expect(await mp3Duration(blob(file))).toBeUndefined()
		expect(await mediaDuration(blob(file))).toMatchObject({ format: 'aac' })
		expect(await adtsDuration(blob(mp3Cbr(2)))).toBeUndefined()
	})

	it('should read WebM as MediaRecorder writes it (no Duration, clusters of unknown size) by its blocks', async () => {
		// 95 s of 20 ms Opus blocks: the last starts at 94.98 s and lasts the 20 ms gap before it.
		expect((await webmDuration(blob(webm(95))))!.seconds).toBeCloseTo(95, 6)
		expect(await mediaDuration(blob(webm(12)))).toMatchObject({ format: 'webm' })
		// The blocks are what plays: a Duration that says 1 s does not shorten 20 s of blocks.
		expect((await webmDuration(blob(webm(20, 1000))))!.seconds).toBeCloseTo(20, 6)
		expect(await webmDuration(blob(m4a(1000, 100)))).toBeUndefined()
	})

	it('should not recognise bytes that are none of these formats', async () => {
		const junk = new Uint8Array(50_000).map((_, i) => (i * 7919) % 251)
		expect(await mediaDuration(blob(junk))).toBeUndefined()
		// "ID3" then no frames at all (what the QA's fake60.mp3 is).
		expect(await mediaDuration(blob(new Uint8Array([0x49, 0x44, 0x33, 4, 0xff, 0xfb, 0x90, 0x64, 0xff, 0xfb])))).toBeUndefined()
	})
})

describe('estimateSeconds', () => {
	it('should charge what the header says and hold at least that', async () => {
		expect(await estimateSeconds(blob(mp3Cbr(60)))).toEqual({ seconds: 60, upper: 960_000 / MIN_BYTES_PER_SECOND, exact: true })
		expect(await estimateSeconds(blob(wavFile(3)))).toMatchObject({ seconds: 3, exact: true })
	})

	it('should charge a 60 s WebM and a 60 s AAC for 60 s, whatever their bitrate (they were charged at 128 kbit/s)', async () => {
		const w = await estimateSeconds(blob(webm(60, undefined, 40)))
		expect(w.exact).toBe(true)
		expect(w.seconds).toBeCloseTo(60, 6)
		const a = await estimateSeconds(blob(adts(60, 200)))
		expect(a.exact).toBe(true)
		expect(a.seconds).toBeCloseTo(60, 1)
	})

	it('should settle an unknown format at 128 kbit/s, marked estimated, and hold at 16 kbit/s', async () => {
		const junk = new Uint8Array(160_000).map((_, i) => (i * 7919) % 251)
		expect(await estimateSeconds(blob(junk))).toEqual({ seconds: 160_000 / SETTLE_BYTES_PER_SECOND, upper: 160_000 / MIN_BYTES_PER_SECOND, exact: false })
	})

	it('should not believe a header too short for the file, and charge the size floor instead', async () => {
		// mvhd says 1 s for 5 MB: at most 8 Mbit/s, so at least 5 s.
		const g = await estimateSeconds(blob(m4a(1000, 5_000_000)))
		expect(g.exact).toBe(false)
		expect(g.seconds).toBeCloseTo(5, 1)
	})
})
