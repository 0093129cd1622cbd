/** An interaction's events made again from the kept resource, and the steps read back from events (a cancelled run's). */
import { describe, expect, it } from 'bun:test'
import { eventsOf, stepsOf } from '../../../src/modules/interactions/events'

describe('interaction events from a kept interaction', () => {
	it('should replay cited text with its text_annotation_delta and read the same steps back', () => {
		const annotations = [{ type: 'url_citation', url: 'https://a.example', title: 'A', start_index: 7, end_index: 12 }]
		const steps = [
			{ type: 'model_output', content: [{ type: 'text', text: 'Café: cited.', annotations }] },
			{ type: 'function_call', id: 'c1', name: 'f', arguments: { a: 1 } },
		]
		const events = eventsOf({ id: 'v1_x', object: 'interaction', status: 'requires_action', steps })
		expect(events.map((e) => JSON.parse(e)).filter((e) => e.delta?.type === 'text_annotation_delta')).toEqual([
			{ event_type: 'step.delta', index: 0, delta: { type: 'text_annotation_delta', annotations }, event_id: 'evt_4' },
		])
		expect(stepsOf(events)).toEqual(steps)
	})
})
