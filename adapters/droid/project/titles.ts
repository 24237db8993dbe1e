import type { EventDraft } from '../../../core/events/index.js';
import type { DroidNotificationOf } from '../notifications.js';
import { contentHash } from './keys.js';

/**
 * `session_title_updated` → events. A title is a session attribute like the model, so it is
 * reported as `settings.changed {title, titleSource}`. Once the title is manual (One Works set
 * it at creation, or a `manual_rename` arrived), droid's automatic titles (`first_user_message`,
 * `llm_generated`, which 0.225.2 can still send after a rename) no longer change it in One
 * Works' view: they are kept as an info `log` instead, under the same key.
 */
export class TitleUpdates {
  #manual: boolean;

  /** `manual`: the session already has a title that One Works chose. */
  constructor(manual: boolean) {
    this.#manual = manual;
  }

  project(n: DroidNotificationOf<'session_title_updated'>): EventDraft[] {
    const key = `title:${n.updateType ?? 'unknown'}:${contentHash(n.title)}`;
    const manual = n.updateType === 'manual_rename';
    if (manual) this.#manual = true;
    else if (this.#manual) {
      const source = n.updateType ?? 'unknown source';
      return [
        {
          type: 'log',
          key,
          level: 'info',
          message: `droid proposed an automatic title (${source}): "${n.title}"; the session keeps its own title`,
        },
      ];
    }
    const settings: Record<string, unknown> = { title: n.title };
    if (n.updateType !== undefined) settings.titleSource = n.updateType;
    return [{ type: 'settings.changed', key, settings }];
  }
}
